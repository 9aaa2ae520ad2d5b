/**
 * The stack's alarms through the operator CLI, on the local runtime, where CloudWatch's alarms
 * are evaluated as on AWS: `status` and `alarms` say which alarm fires and why, which has its
 * actions off and which is gone, and `alarms --history` what changed; `check` fails a deleted
 * alarm and warns of one silenced or retuned; `check --fix` puts each back as the deployed
 * template declares it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CloudWatchClient,
  DeleteAlarmsCommand,
  DescribeAlarmsCommand,
  DisableAlarmActionsCommand,
  type MetricAlarm,
  PutMetricAlarmCommand,
} from '@aws-sdk/client-cloudwatch';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../local/emulators.ts';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { loadStack } from '../../local/template.ts';
import { onceflow, recordState } from '../support/cli.ts';
import { sharedDynamoLocal } from '../support/emulators.ts';
import { seedBatches } from '../support/fixtures.ts';
import { parseJson } from '../support/json.ts';
import { uniqueName } from '../support/pipeline.ts';

let runtime: LocalRuntime;
let cw: CloudWatchClient;
let cli: (...args: string[]) => ReturnType<typeof onceflow>;

/** The alarm's name: `<stack>-<logicalId>`, its logical id found by its construct's id. */
const nameOf = (id: string) => {
  const { assemblyDir, stackName } = inject('assembly');
  const logicalId = Object.keys(loadStack(assemblyDir, stackName).template.Resources).find((l) =>
    new RegExp(`^Alarms${id}[0-9A-F]{8}$`).test(l),
  );
  if (!logicalId) throw new Error(`no alarm ${id} in the template`);
  return `${runtime.stack.stackName}-${logicalId}`;
};

/** An alarm's own description as `PutMetricAlarm` takes it (what an operator edits). */
const putInput = (a: MetricAlarm | undefined) => ({
  AlarmName: a?.AlarmName,
  AlarmDescription: a?.AlarmDescription,
  MetricName: a?.MetricName,
  Namespace: a?.Namespace,
  Statistic: a?.Statistic,
  Dimensions: a?.Dimensions,
  Period: a?.Period,
  EvaluationPeriods: a?.EvaluationPeriods,
  Threshold: a?.Threshold,
  ComparisonOperator: a?.ComparisonOperator,
  TreatMissingData: a?.TreatMissingData,
});

const FindingsSchema = v.array(
  v.object({ subject: v.string(), name: v.string(), verdict: v.string(), detail: v.string() }),
);

beforeAll(async () => {
  const { assemblyDir, stackName } = inject('assembly');
  runtime = await startLocalRuntime({
    assemblyDir,
    stackName,
    localStackName: uniqueName('alarms'),
    dynamoLocal: sharedDynamoLocal(),
    retryDelaySeconds: 1,
  });
  cw = new CloudWatchClient({
    endpoint: runtime.endpoint,
    region: runtime.region,
    credentials: LOCAL_CREDENTIALS,
  });
  const state = recordState(runtime, mkdtempSync(join(tmpdir(), 'onceflow-alarms-')));
  cli = (...args) => onceflow(['--local-state', state, ...args]);
});
afterAll(async () => {
  cw?.destroy();
  await runtime?.stop();
});

describe('onceflow status and check on the stack’s alarms', () => {
  it('names a firing alarm, a silenced, a retuned and a deleted one, and --fix puts the last three back', async () => {
    const quiet = await cli('status');
    expect(quiet.stdout).toMatch(/^alarms: \d+, 0 in ALARM$/m);

    // A message in the orders DLQ; the aggregate DLQ's alarm silenced; the ingest Errors alarm gone.
    await runtime.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: runtime.stack.outputs.OrdersDlqUrl,
        MessageBody: seedBatches()[0] ?? '',
      }),
    );
    await cw.send(new DisableAlarmActionsCommand({ AlarmNames: [nameOf('aggregateDlqMessages')] }));
    await cw.send(new DeleteAlarmsCommand({ AlarmNames: [nameOf('IngestOrdersErrors')] }));
    // And the conflicts alarm quieted by a threshold no incident reaches.
    const [conflicts] =
      (await cw.send(new DescribeAlarmsCommand({ AlarmNames: [nameOf('BatchConflicts')] })))
        .MetricAlarms ?? [];
    await cw.send(new PutMetricAlarmCommand({ ...putInput(conflicts), Threshold: 1000 }));

    const status = await cli('status');
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^alarms: \d+, 1 in ALARM, 1 with actions off, 1 MISSING$/m);
    expect(status.stdout).toMatch(
      /^ {2}ALARM ordersDlqMessages: Threshold Crossed: 1 datapoint \[[\d.]+ \(.+\)\] was greater than or equal to the threshold \(1\.0\)/m,
    );
    expect(status.stdout).toContain('  actions off: aggregateDlqMessages (nobody is told');
    expect(status.stdout).toContain('  MISSING: IngestOrdersErrors (deleted: nothing watches');
    const json = parseJson(
      v.object({ alarms: v.array(v.looseObject({ id: v.string() })) }),
      (await cli('status', '--json')).stdout,
    );
    expect(json.alarms).toContainEqual(
      expect.objectContaining({ id: 'ordersDlqMessages', state: 'ALARM', actionsEnabled: true }),
    );

    // `onceflow alarms`: each alarm's row, and the state changes that brought it there.
    const listed = await cli('alarms');
    expect(listed.stdout).toMatch(
      /│ ordersDlqMessages +│ ALARM +│ \S+Z +│ none +│ Threshold Crossed/,
    );
    expect(listed.stdout).toMatch(/│ aggregateDlqMessages +│ OK +│ \S+Z +│ off \(none\) +│/);
    expect(listed.stdout).toMatch(/│ IngestOrdersErrors +│ MISSING +│/);
    const history = parseJson(
      v.array(
        v.object({
          id: v.string(),
          at: v.string(),
          summary: v.string(),
          reason: v.optional(v.string()),
        }),
      ),
      (await cli('alarms', '--history', '1h', '--json')).stdout,
    );
    // Each change with CloudWatch's reason for it, from the change's `HistoryData`.
    expect(history).toContainEqual(
      expect.objectContaining({
        id: 'ordersDlqMessages',
        summary: 'Alarm updated from OK to ALARM',
        reason: expect.stringMatching(/^Threshold Crossed: 1 datapoint \[/),
      }),
    );
    expect((await cli('alarms', '--history', '1h')).stdout).toMatch(
      /^\S+Z {2}ordersDlqMessages: Alarm updated from OK to ALARM: Threshold Crossed: 1 datapoint \[[\d.]+ \(.+\)\] was greater than or equal to the threshold \(1\.0\)\.$/m,
    );
    // Newest first.
    expect(history.map((h) => h.at)).toEqual(
      history
        .map((h) => h.at)
        .sort()
        .reverse(),
    );

    const checked = await cli('check', '--json');
    expect(checked.code).toBe(1);
    const findings = parseJson(FindingsSchema, checked.stdout).filter((f) => f.subject === 'alarm');
    expect(findings.filter((f) => f.verdict !== 'ok')).toEqual([
      expect.objectContaining({
        name: 'BatchConflicts',
        verdict: 'warn',
        detail: expect.stringContaining('changed by hand since the deploy (Threshold 1000 → 1)'),
      }),
      expect.objectContaining({
        name: 'IngestOrdersErrors',
        verdict: 'fail',
        detail: expect.stringContaining('does not exist (deleted by hand?)'),
      }),
      // No alarm email in this stack, so no action goes unsent yet: a warning.
      expect.objectContaining({ name: 'aggregateDlqMessages', verdict: 'warn' }),
    ]);

    const fixed = await cli('check', '--fix');
    expect(fixed.stderr).toContain('↺ put back alarm, aggregateDlqMessages: actions off → on');
    expect(fixed.stderr).toContain(
      `↺ put back alarm, BatchConflicts: put back ${nameOf('BatchConflicts')}: Threshold 1000 → 1`,
    );
    expect(fixed.stderr).toContain(
      `↺ put back alarm, IngestOrdersErrors: create ${nameOf('IngestOrdersErrors')}: Sum of AWS/Lambda Errors ≥ 1 over 1 × 60 s`,
    );
    const after = parseJson(FindingsSchema, (await cli('check', '--json')).stdout);
    expect(after.filter((f) => f.subject === 'alarm' && f.verdict !== 'ok')).toEqual([]);
    // Created as deployed: its dimension names this stack's ingest function.
    const [created] =
      (await cw.send(new DescribeAlarmsCommand({ AlarmNames: [nameOf('IngestOrdersErrors')] })))
        .MetricAlarms ?? [];
    const ingest = runtime.stack.functions.find((f) => f.logicalId.startsWith('IngestOrders'));
    expect(created).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: ingest?.name }],
      TreatMissingData: 'notBreaching',
      ActionsEnabled: true,
    });
  });
});
