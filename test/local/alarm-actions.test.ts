/**
 * An alarm's actions in the local runtime: the template's SNS topic and its SQS subscription are
 * created in fauxqs, and an alarm that changes state publishes CloudWatch's notification to the
 * topic, so the subscribed queue receives what it would on AWS; with its actions turned off, it
 * publishes nothing. An email subscription is named at start as not delivered.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CloudWatchClient,
  DescribeAlarmHistoryCommand,
  DescribeAlarmsCommand,
  DisableAlarmActionsCommand,
  SetAlarmStateCommand,
} from '@aws-sdk/client-cloudwatch';
import { LambdaClient, PutFunctionConcurrencyCommand } from '@aws-sdk/client-lambda';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../local/emulators.ts';
import { waitFor } from '../../local/net.ts';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { lambdaAlarmResource, writeHandAssembly } from '../support/assembly.ts';
import { onceflow, recordState } from '../support/cli.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { useEmulators } from '../support/emulators.ts';
import { parseJson } from '../support/json.ts';
import { uniqueName } from '../support/names.ts';

const emulators = useEmulators();
let runtime: LocalRuntime;
let cw: CloudWatchClient;
const stackName = uniqueName('actions');

/** An alarm on the function's metric, telling the topic when it fires and when it clears. */
const alarmOn = (metric: string) =>
  lambdaAlarmResource(metric, 1, {
    AlarmDescription: `${metric} of Fn`,
    AlarmActions: [{ Ref: 'Topic' }],
    OKActions: [{ Ref: 'Topic' }],
  });

beforeAll(async () => {
  const assemblyDir = writeHandAssembly(
    mkdtempSync(join(tmpdir(), 'onceflow-actions-')),
    stackName,
    {
      Resources: {
        Alerts: { Type: 'AWS::SQS::Queue', Properties: {} },
        Topic: { Type: 'AWS::SNS::Topic', Properties: {} },
        ToQueue: {
          Type: 'AWS::SNS::Subscription',
          Properties: {
            TopicArn: { Ref: 'Topic' },
            Protocol: 'sqs',
            Endpoint: { 'Fn::GetAtt': ['Alerts', 'Arn'] },
            RawMessageDelivery: true,
          },
        },
        ToEmail: {
          Type: 'AWS::SNS::Subscription',
          Properties: {
            TopicArn: { Ref: 'Topic' },
            Protocol: 'email',
            Endpoint: 'ops@example.com',
          },
        },
        Fn: {
          Type: 'AWS::Lambda::Function',
          Metadata: { 'aws:asset:path': 'asset.fn' },
          Properties: { Handler: 'index.handler', Timeout: 30, MemorySize: 128 },
        },
        Errors: alarmOn('Errors'),
        Throttles: alarmOn('Throttles'),
      },
      Outputs: { AlertsUrl: { Value: { Ref: 'Alerts' } } },
    },
    { 'asset.fn': 'export const handler = async (event) => { throw new Error(event.why); };' },
  );
  runtime = await startLocalRuntime({ assemblyDir, emulators: emulators() });
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

const NotificationSchema = v.object({
  AlarmName: v.string(),
  NewStateValue: v.string(),
  OldStateValue: v.string(),
  NewStateReason: v.string(),
  AlarmArn: v.string(),
  Trigger: v.object({
    MetricName: v.string(),
    Statistic: v.string(),
    Dimensions: v.array(v.object({ name: v.string(), value: v.string() })),
  }),
});

/** The notifications the subscribed queue received so far (each deleted from view for 30 s). */
const received = async () =>
  (
    (
      await runtime.clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: runtime.stack.outputs.AlertsUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
        }),
      )
    ).Messages ?? []
  ).map((m) => parseJson(NotificationSchema, m.Body ?? ''));

describe('alarm actions in the local runtime', () => {
  it('publishes CloudWatch’s notification to the stack’s topic, which its SQS subscriber receives', async () => {
    expect(runtime.stack.notRun).toContain(
      'ToEmail: its email subscriber is not delivered to (only SQS subscribers are, locally)',
    );
    const fn = runtime.stack.functions[0]?.name ?? '';
    await expect(runtime.invoke('Fn', { why: 'a drill' })).rejects.toThrow('a drill');
    const notes: v.InferOutput<typeof NotificationSchema>[] = [];
    await waitFor(
      async () => {
        // Reading the alarms evaluates them at once (the edge also does every 10 s).
        await cw.send(new DescribeAlarmsCommand({ AlarmNamePrefix: stackName }));
        notes.push(...(await received()));
        return notes.some((n) => n.AlarmName.endsWith('-Errors') && n.NewStateValue === 'ALARM');
      },
      { timeoutMs: DEADLINE_MS, what: 'the Errors alarm’s notification in the subscribed queue' },
    );
    const fired = notes.find((n) => n.AlarmName.endsWith('-Errors') && n.NewStateValue === 'ALARM');
    expect(fired).toMatchObject({
      AlarmName: `${stackName}-Errors`,
      AlarmArn: `arn:aws:cloudwatch:us-east-1:000000000000:alarm:${stackName}-Errors`,
      NewStateReason: expect.stringMatching(
        /^Threshold Crossed: 1 datapoint \[[\d.]+ \(.+\)\] was greater/,
      ),
      Trigger: {
        MetricName: 'Errors',
        Statistic: 'SUM',
        Dimensions: [{ name: 'FunctionName', value: fn }],
      },
    });
    const history = await cw.send(
      new DescribeAlarmHistoryCommand({
        AlarmName: `${stackName}-Errors`,
        HistoryItemType: 'Action',
      }),
    );
    expect(history.AlarmHistoryItems?.map((h) => h.HistorySummary)).toContain(
      `Successfully executed action arn:aws:sns:us-east-1:000000000000:${stackName}-Topic`,
    );
  });

  it('publishes nothing for an alarm whose actions are off', async () => {
    const name = `${stackName}-Throttles`;
    await cw.send(new DisableAlarmActionsCommand({ AlarmNames: [name] }));
    const [before] =
      (await cw.send(new DescribeAlarmsCommand({ AlarmNames: [name] }))).MetricAlarms ?? [];
    expect(before).toMatchObject({ ActionsEnabled: false });
    // Throttled at a reserved concurrency of 0: the Throttles alarm fires, silently.
    const lambda = new LambdaClient({
      endpoint: runtime.endpoint,
      region: runtime.region,
      credentials: LOCAL_CREDENTIALS,
    });
    await lambda.send(
      new PutFunctionConcurrencyCommand({
        FunctionName: runtime.stack.functions[0]?.name,
        ReservedConcurrentExecutions: 0,
      }),
    );
    lambda.destroy();
    await expect(runtime.invoke('Fn', { why: 'never run' })).rejects.toThrow('Rate Exceeded');
    const state = async () =>
      (await cw.send(new DescribeAlarmsCommand({ AlarmNames: [name] }))).MetricAlarms?.[0];
    await waitFor(async () => (await state())?.StateValue === 'ALARM', {
      timeoutMs: DEADLINE_MS,
      what: 'the Throttles alarm to fire',
    });
    const history = await cw.send(new DescribeAlarmHistoryCommand({ AlarmName: name }));
    expect(history.AlarmHistoryItems?.map((h) => h.HistorySummary)).toContain(
      'Alarm updated from OK to ALARM',
    );
    expect(history.AlarmHistoryItems?.filter((h) => h.HistoryItemType === 'Action')).toEqual(
      // Its first change, INSUFFICIENT_DATA to OK, ran its OK action before it was turned off.
      [
        expect.objectContaining({
          HistorySummary: expect.stringContaining('Successfully executed'),
        }),
      ],
    );
    expect(
      (await received()).filter((n) => n.AlarmName === name && n.NewStateValue === 'ALARM'),
    ).toEqual([]);
  });

  it('drills an alarm’s notifications with onceflow alarms --test: its subscriber receives one that says so', async () => {
    const cli = (...args: string[]) =>
      onceflow([
        '--local-state',
        recordState(runtime, mkdtempSync(join(tmpdir(), 'onceflow-drill-'))),
        ...args,
      ]);
    // Errors fired in the first test: back to OK (held until its next evaluation), so that the
    // drill is a change of state, which is what runs actions.
    await cw.send(
      new SetAlarmStateCommand({
        AlarmName: `${stackName}-Errors`,
        StateValue: 'OK',
        StateReason: 'before the drill',
      }),
    );
    await received();
    const drilled = await cli('alarms', '--test', 'Errors');
    expect(drilled.code, drilled.stderr).toBe(0);
    expect(drilled.stdout).toBe(
      'Errors set in ALARM: its action runs now; CloudWatch puts it back at its next evaluation (within a minute)\n',
    );
    const notes: v.InferOutput<typeof NotificationSchema>[] = [];
    await waitFor(
      async () => {
        notes.push(...(await received()));
        return notes.some((n) => n.NewStateReason.startsWith('onceflow alarms --test'));
      },
      { timeoutMs: DEADLINE_MS, what: 'the drill’s notification in the subscribed queue' },
    );
    // Already in ALARM: setting it again would notify nobody, and the command says so.
    const again = await cli('alarms', '--test', 'Errors');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('Errors is in ALARM already');
    expect((await cli('alarms', '--test', 'Nope')).stderr).toContain('no alarm Nope: the stack');
  });
});
