/**
 * CloudWatch on the local edge: the stack's alarms, evaluated against the metrics the runtime
 * publishes (the functions' embedded metrics, Lambda's and SQS's), read and changed through the
 * AWS SDK's own client as on AWS.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CloudWatchClient,
  DeleteAlarmsCommand,
  DescribeAlarmHistoryCommand,
  DescribeAlarmsCommand,
  DisableAlarmActionsCommand,
  EnableAlarmActionsCommand,
  GetMetricStatisticsCommand,
  InvalidParameterCombinationException,
  type MetricAlarm,
  PutMetricAlarmCommand,
  ResourceNotFound,
  SetAlarmStateCommand,
} from '@aws-sdk/client-cloudwatch';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../local/emulators.ts';
import { waitFor } from '../../local/net.ts';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { loadStack } from '../../local/template.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { sharedDynamoLocal } from '../support/emulators.ts';
import { seedBatches } from '../support/fixtures.ts';
import { uniqueName } from '../support/pipeline.ts';

let runtime: LocalRuntime;
let cw: CloudWatchClient;

const alarms = async (): Promise<MetricAlarm[]> =>
  (await cw.send(new DescribeAlarmsCommand({ AlarmNamePrefix: `${runtime.stack.stackName}-` })))
    .MetricAlarms ?? [];

/** The stack's alarm whose logical id starts with `prefix` (`AlarmsRejectedMessages`…). */
const alarm = async (prefix: string): Promise<MetricAlarm> => {
  const found = (await alarms()).find((a) =>
    a.AlarmName?.startsWith(`${runtime.stack.stackName}-${prefix}`),
  );
  if (!found) throw new Error(`no alarm ${prefix}`);
  return found;
};

const stateOf = async (prefix: string) => (await alarm(prefix)).StateValue;

const send = (queueUrl: string, body: string) =>
  runtime.clients.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));

beforeAll(async () => {
  const { assemblyDir, stackName } = inject('assembly');
  runtime = await startLocalRuntime({
    assemblyDir,
    stackName,
    localStackName: uniqueName('cloudwatch'),
    dynamoLocal: sharedDynamoLocal(),
    retryDelaySeconds: 1,
    logDir: mkdtempSync(join(tmpdir(), 'onceflow-cloudwatch-')),
  });
  cw = new CloudWatchClient({
    endpoint: runtime.endpoint,
    region: runtime.region,
    credentials: LOCAL_CREDENTIALS,
  });
});
afterAll(async () => {
  cw?.destroy();
  await runtime?.stop();
});

describe('CloudWatch alarms on the local edge', () => {
  it('creates every alarm of the template with the stack, each OK while nothing breaches', async () => {
    const { assemblyDir, stackName } = inject('assembly');
    const declared = Object.entries(loadStack(assemblyDir, stackName).template.Resources).filter(
      ([, r]) => r.Type === 'AWS::CloudWatch::Alarm',
    );
    const found = await alarms();
    expect(found.map((a) => a.AlarmName).sort()).toEqual(
      declared.map(([id]) => `${runtime.stack.stackName}-${id}`).sort(),
    );
    for (const a of found)
      expect(a).toMatchObject({
        StateValue: 'OK',
        ActionsEnabled: true,
        TreatMissingData: 'notBreaching',
      });
    // No datapoint yet: the functions' metrics have none; the queues' depths are sampled, 0.
    expect((await alarm('AlarmsRejectedMessages')).StateReason).toBe(
      'Threshold Crossed: no datapoints were received for 1 period and the missing data is treated as notBreaching.',
    );
    expect((await alarm('AlarmsordersDlqMessages')).StateReason).toMatch(
      /^Threshold Crossed: 0 of 1 period was greater than or equal to the threshold \(1\), 1 needed for ALARM; datapoints \[0\.0 \(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)\]\.$/,
    );
  });

  it('fires the quarantine alarm when a body is quarantined, from the metric the function logs', async () => {
    await send(runtime.stack.outputs.OrdersQueueUrl ?? '', '{"not":"a batch"}');
    await waitFor(async () => (await stateOf('AlarmsRejectedMessages')) === 'ALARM', {
      timeoutMs: DEADLINE_MS,
      what: 'the RejectedMessages alarm to fire',
    });
    const fired = await alarm('AlarmsRejectedMessages');
    expect(fired.StateReason).toMatch(
      /^Threshold Crossed: 1 of 1 period was greater than or equal to the threshold \(1\)/,
    );
    expect(JSON.parse(fired.StateReasonData ?? '{}')).toMatchObject({ recentDatapoints: [1] });
    const figures = await cw.send(
      new GetMetricStatisticsCommand({
        Namespace: 'onceflow',
        MetricName: 'RejectedMessages',
        Dimensions: [{ Name: 'service', Value: 'onceflow' }],
        StartTime: new Date(Date.now() - 3_600_000),
        EndTime: new Date(Date.now() + 60_000),
        Period: 7200,
        Statistics: ['Sum', 'SampleCount'],
      }),
    );
    expect(figures.Datapoints).toEqual([
      expect.objectContaining({ Sum: 1, SampleCount: 1, Unit: 'Count' }),
    ]);
    const history = await cw.send(
      new DescribeAlarmHistoryCommand({
        AlarmName: fired.AlarmName,
        HistoryItemType: 'StateUpdate',
      }),
    );
    expect(history.AlarmHistoryItems?.[0]?.HistorySummary).toBe('Alarm updated from OK to ALARM');
  });

  it('fires the DLQ alarm on a message in the DLQ, from the queue’s sampled depth', async () => {
    expect(await stateOf('AlarmsordersDlqMessages')).toBe('OK');
    await send(runtime.stack.outputs.OrdersDlqUrl ?? '', seedBatches()[0] ?? '');
    expect(await stateOf('AlarmsordersDlqMessages')).toBe('ALARM');
  });

  it('fires the Errors alarm when an invocation fails as a whole, from Lambda’s metrics', async () => {
    const ingest = runtime.stack.functions.find((f) => f.logicalId.startsWith('IngestOrders'));
    expect(await stateOf('AlarmsIngestOrdersErrors')).toBe('OK');
    await expect(runtime.invoke(ingest?.name ?? '', { Records: 'not a list' })).rejects.toThrow();
    expect(await stateOf('AlarmsIngestOrdersErrors')).toBe('ALARM');
    const errors = await cw.send(
      new GetMetricStatisticsCommand({
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: ingest?.name ?? '' }],
        StartTime: new Date(Date.now() - 3_600_000),
        EndTime: new Date(Date.now() + 60_000),
        Period: 7200,
        Statistics: ['Sum'],
      }),
    );
    expect(errors.Datapoints?.[0]?.Sum).toBe(1);
  });

  it('turns an alarm’s actions off and on, holds a state set by hand, and names a missing alarm', async () => {
    const { AlarmName } = await alarm('AlarmsBatchConflicts');
    await cw.send(new DisableAlarmActionsCommand({ AlarmNames: [AlarmName ?? ''] }));
    expect((await alarm('AlarmsBatchConflicts')).ActionsEnabled).toBe(false);
    await cw.send(new EnableAlarmActionsCommand({ AlarmNames: [AlarmName ?? ''] }));
    expect((await alarm('AlarmsBatchConflicts')).ActionsEnabled).toBe(true);

    // Until the next evaluation, a minute later: what a drill of the alarm's actions relies on.
    await cw.send(
      new SetAlarmStateCommand({ AlarmName, StateValue: 'ALARM', StateReason: 'drill' }),
    );
    expect(await alarm('AlarmsBatchConflicts')).toMatchObject({
      StateValue: 'ALARM',
      StateReason: 'drill',
    });

    await expect(
      cw.send(
        new SetAlarmStateCommand({
          AlarmName: 'no-such-alarm',
          StateValue: 'OK',
          StateReason: 'x',
        }),
      ),
    ).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(
      cw.send(new DescribeAlarmsCommand({ AlarmNames: ['a'], AlarmNamePrefix: 'a' })),
    ).rejects.toBeInstanceOf(InvalidParameterCombinationException);
  });

  it('deletes an alarm and creates it again from its own description', async () => {
    const before = await alarm('AlarmsEventConflicts');
    await cw.send(new DeleteAlarmsCommand({ AlarmNames: [before.AlarmName ?? ''] }));
    expect((await alarms()).map((a) => a.AlarmName)).not.toContain(before.AlarmName);
    await expect(
      cw.send(new DeleteAlarmsCommand({ AlarmNames: [before.AlarmName ?? ''] })),
    ).rejects.toBeInstanceOf(ResourceNotFound);
    await cw.send(
      new PutMetricAlarmCommand({
        AlarmName: before.AlarmName,
        AlarmDescription: before.AlarmDescription,
        MetricName: before.MetricName,
        Namespace: before.Namespace,
        Statistic: before.Statistic,
        Dimensions: before.Dimensions,
        Period: before.Period,
        EvaluationPeriods: before.EvaluationPeriods,
        Threshold: before.Threshold,
        ComparisonOperator: before.ComparisonOperator,
        TreatMissingData: before.TreatMissingData,
      }),
    );
    expect(await alarm('AlarmsEventConflicts')).toMatchObject({
      StateValue: 'OK',
      MetricName: 'EventConflicts',
      Period: 300,
    });
  });
});
