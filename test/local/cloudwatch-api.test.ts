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
  GetMetricDataCommand,
  GetMetricStatisticsCommand,
  InvalidParameterCombinationException,
  type MetricAlarm,
  PutMetricAlarmCommand,
  ResourceNotFound,
  SetAlarmStateCommand,
} from '@aws-sdk/client-cloudwatch';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { SmithyRpcV2CborProtocol } from '@smithy/core/cbor';
import { HttpRequest } from '@smithy/core/protocols';
import AWS from 'aws-sdk';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { DynamoOrderReader } from '../../adapters/dynamo-order-reader.ts';
import { ingestSettings } from '../../adapters/wiring.ts';
import { LOCAL_CREDENTIALS } from '../../local/emulators.ts';
import { waitFor } from '../../local/net.ts';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { loadStack } from '../../local/template.ts';
import { loadIngestConfig } from '../../shared/config.ts';
import { planBatch } from '../../shared/ingest.ts';
import { validateBatch } from '../../shared/schema.ts';
import { awsCli, awsCliVersion, reportMissingAwsCli } from '../support/aws-cli.ts';
import {
  overAnHour as metricOverAnHour,
  type Statistic,
  stackAlarm,
  stackAlarms,
  statisticOf as statisticOfMetric,
} from '../support/cloudwatch.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { sharedDynamoLocal } from '../support/emulators.ts';
import { seedBatches } from '../support/fixtures.ts';
import { placedEvent } from '../support/hours.ts';
import { parseJson } from '../support/json.ts';
import { uniqueName } from '../support/pipeline.ts';

let runtime: LocalRuntime;
let cw: CloudWatchClient;

const alarms = (): Promise<MetricAlarm[]> => stackAlarms(cw, runtime.stack.stackName);

/** The stack's alarm whose logical id starts with `prefix` (`AlarmsRejectedMessages`…). */
const alarm = (prefix: string): Promise<MetricAlarm> =>
  stackAlarm(cw, runtime.stack.stackName, prefix);

const stateOf = async (prefix: string) => (await alarm(prefix)).StateValue;

/** `GetMetricStatistics`' input for one of onceflow's metrics over the last hour. */
const overAnHour = (metricName: string, statistics: Statistic[]) =>
  metricOverAnHour(inject('assembly').stackName, metricName, statistics);

/** The quarantined bodies of the last hour. */
const rejectedOverAnHour = (statistics: Statistic[]) => overAnHour('RejectedMessages', statistics);

/** One statistic of one of onceflow's metrics over the last hour; 0 without data. */
const statisticOf = (metricName: string, statistic: Statistic) =>
  statisticOfMetric(cw, inject('assembly').stackName, metricName, statistic);

/** `GetMetricData`'s input for the quarantined bodies per minute over the last hour. */
const rejectedPerMinute = () => ({
  MetricDataQueries: [
    {
      Id: 'rejected',
      MetricStat: {
        Metric: {
          Namespace: 'onceflow',
          MetricName: 'RejectedMessages',
          Dimensions: [{ Name: 'service', Value: inject('assembly').stackName }],
        },
        Period: 60,
        Stat: 'Sum',
      },
      ReturnData: true,
    },
  ],
  StartTime: new Date(Date.now() - 3_600_000),
  EndTime: new Date(Date.now() + 60_000),
});

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

reportMissingAwsCli('its CloudWatch test is');

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
      'Threshold Crossed: no datapoints were received for 1 period and 1 missing datapoint was treated as [NonBreaching].',
    );
    expect((await alarm('AlarmsordersDlqMessages')).StateReason).toMatch(
      /^Threshold Crossed: 1 datapoint \[0\.0 \(\d\d\/\d\d\/\d\d \d\d:\d\d:\d\d\)\] was not greater than or equal to the threshold \(1\.0\)\.$/,
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
      /^Threshold Crossed: 1 datapoint \[1\.0 \(\d\d\/\d\d\/\d\d \d\d:\d\d:\d\d\)\] was greater than or equal to the threshold \(1\.0\)\.$/,
    );
    expect(JSON.parse(fired.StateReasonData ?? '{}')).toMatchObject({ recentDatapoints: [1] });
    const figures = await cw.send(
      new GetMetricStatisticsCommand(rejectedOverAnHour(['Sum', 'SampleCount'])),
    );
    expect(figures.Datapoints).toEqual([
      expect.objectContaining({ Sum: 1, SampleCount: 1, Unit: 'Count' }),
    ]);
    const data = await cw.send(
      new GetMetricDataCommand({
        ...rejectedPerMinute(),
      }),
    );
    expect(data.MetricDataResults).toEqual([
      expect.objectContaining({ Id: 'rejected', Values: [1], StatusCode: 'Complete' }),
    ]);
    expect(data.MetricDataResults?.[0]?.Timestamps?.[0]).toBeInstanceOf(Date);
    await expect(
      cw.send(
        new GetMetricDataCommand({
          MetricDataQueries: [{ Id: 'm', Expression: 'SUM(METRICS())' }],
          StartTime: new Date(Date.now() - 3_600_000),
          EndTime: new Date(),
        }),
      ),
    ).rejects.toThrow('m: metric math is not computed locally; give a MetricStat');
    const history = await cw.send(
      new DescribeAlarmHistoryCommand({
        AlarmName: fired.AlarmName,
        HistoryItemType: 'StateUpdate',
      }),
    );
    expect(history.AlarmHistoryItems?.[0]?.HistorySummary).toBe('Alarm updated from OK to ALARM');
    // The change's data, as CloudWatch gives it: both states with their reasons and reason data.
    const HistoryDataSchema = v.object({
      version: v.literal('1.0'),
      oldState: v.object({ stateValue: v.string(), stateReason: v.string() }),
      newState: v.object({
        stateValue: v.string(),
        stateReason: v.string(),
        stateReasonData: v.looseObject({ recentDatapoints: v.array(v.number()) }),
      }),
    });
    const change = v.parse(
      HistoryDataSchema,
      JSON.parse(history.AlarmHistoryItems?.[0]?.HistoryData ?? ''),
    );
    expect(change.oldState).toMatchObject({
      stateValue: 'OK',
      stateReason: expect.stringMatching(/^Threshold Crossed: no datapoints were received/),
    });
    expect(change.newState).toMatchObject({
      stateValue: 'ALARM',
      stateReason: fired.StateReason,
      stateReasonData: { recentDatapoints: [1] },
    });
  });

  it('fires the batch-conflict and event-conflict alarms from the metrics ingest logs', async () => {
    const orderId = uniqueName('o-conflicts');
    const event = placedEvent(orderId);
    const batchId = uniqueName('reused');
    const queue = runtime.stack.outputs.OrdersQueueUrl ?? '';
    expect(await stateOf('AlarmsBatchConflicts')).toBe('OK');
    expect(await stateOf('AlarmsEventConflicts')).toBe('OK');
    await send(queue, JSON.stringify({ batchId, events: [event] }));
    const orders = new DynamoOrderReader(
      runtime.clients.dynamo,
      runtime.stack.outputs.TableName ?? '',
    );
    await waitFor(async () => (await orders.getOrder(orderId)) !== undefined, {
      timeoutMs: DEADLINE_MS,
      what: 'the first batch to be applied',
    });
    // Its id again with other content; its event again, in a batch of its own, with another.
    await send(queue, JSON.stringify({ batchId, events: [{ ...event, amount: '2.00' }] }));
    await send(
      queue,
      JSON.stringify({ batchId: uniqueName('other'), events: [{ ...event, status: 'paid' }] }),
    );
    // Both invocations' metric lines in: the reused id's under whichever name it was counted, and
    // a second EventConflicts sample (every applied batch logs one; the first batch's was 0).
    await waitFor(
      async () =>
        (await statisticOf('BatchConflicts', 'Sum')) +
          (await statisticOf('RejectedMessages', 'Sum')) >=
          2 && (await statisticOf('EventConflicts', 'SampleCount')) >= 2,
      { timeoutMs: DEADLINE_MS, what: 'the conflicting batches’ metrics to be published' },
    );
    // The reused id is a batch conflict, not a body the contract refuses (the test before sent
    // the one of those).
    expect(await statisticOf('BatchConflicts', 'Sum')).toBe(1);
    expect(await statisticOf('RejectedMessages', 'Sum')).toBe(1);
    expect(await statisticOf('EventConflicts', 'Sum')).toBe(1);
    expect(await stateOf('AlarmsBatchConflicts')).toBe('ALARM');
    expect(await stateOf('AlarmsEventConflicts')).toBe('ALARM');
  });

  it('fires the DLQ alarm on a message in the DLQ, from the queue’s sampled depth', async () => {
    expect(await stateOf('AlarmsordersDlqMessages')).toBe('OK');
    await send(runtime.stack.outputs.OrdersDlqUrl ?? '', seedBatches()[0] ?? '');
    expect(await stateOf('AlarmsordersDlqMessages')).toBe('ALARM');
  });

  it('fires an alarm on the age of a queue’s oldest message, sampled from the emulator', async () => {
    // The DLQ's message from the test before, which nothing consumes: it ages.
    const dlq = runtime.stack.queues.find((q) => q.url === runtime.stack.outputs.OrdersDlqUrl);
    const alarmName = `${runtime.stack.stackName}-dlq-age`;
    await cw.send(
      new PutMetricAlarmCommand({
        AlarmName: alarmName,
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: dlq?.name }],
        Statistic: 'Maximum',
        Period: 60,
        EvaluationPeriods: 1,
        Threshold: 2,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      }),
    );
    const state = async () =>
      (await cw.send(new DescribeAlarmsCommand({ AlarmNames: [alarmName] }))).MetricAlarms?.[0];
    await waitFor(async () => (await state())?.StateValue === 'ALARM', {
      timeoutMs: DEADLINE_MS,
      what: 'the DLQ’s oldest message to be 2 s old',
    });
    expect((await state())?.StateReason).toMatch(
      /^Threshold Crossed: 1 datapoint \[[\d.]+ \(.+\)\] was greater/,
    );
    // The orders queue, consumed, has no message to age now: the sample this read takes is 0
    // (earlier ones, taken while a batch waited or was in flight, may be more on a busy machine).
    const orders = runtime.stack.queues.find((q) => q.url === runtime.stack.outputs.OrdersQueueUrl);
    const age = await cw.send(
      new GetMetricStatisticsCommand({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: orders?.name }],
        StartTime: new Date(Date.now() - 3_600_000),
        EndTime: new Date(Date.now() + 60_000),
        Period: 7200,
        Statistics: ['Minimum'],
      }),
    );
    expect(age.Datapoints?.map((d) => [d.Minimum, d.Unit])).toEqual([[0, 'Seconds']]);
    await cw.send(new DeleteAlarmsCommand({ AlarmNames: [alarmName] }));
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

  it('fires the stuck-batch alarm from the pending watcher’s metric while a batch stays claimed', async () => {
    const ingest = runtime.stack.functions.find((f) => f.logicalId.startsWith('IngestOrders'));
    const watch = runtime.stack.functions.find((f) => f.logicalId.startsWith('WatchPending'));
    if (!ingest || !watch) throw new Error('the stack has no ingest or pending watcher');
    expect(await stateOf('AlarmsOldestPendingBatchAge')).toBe('OK');
    // A batch claimed 20 minutes ago and never committed: its message retrying, or in a DLQ.
    const parsed = validateBatch({
      batchId: uniqueName('stuck'),
      events: [placedEvent(uniqueName('o-stuck'))],
    });
    if (!parsed.ok) throw new Error(parsed.detail);
    const settings = ingestSettings(loadIngestConfig(ingest.environment));
    await new DynamoLedger(runtime.clients.dynamo, runtime.stack.outputs.TableName ?? '').claim(
      planBatch(parsed.batch, settings),
      undefined,
      Date.now() - 1_200_000,
    );
    // The watcher's schedule runs every five minutes: run it now, as the schedule would, until
    // the pending index (eventually consistent) shows the claim.
    let runs = 0;
    await waitFor(
      async () => {
        runs++;
        const report = await runtime.invoke(watch.name, {});
        return v.parse(v.object({ pending: v.number() }), report).pending > 0;
      },
      { timeoutMs: DEADLINE_MS, what: 'the pending watcher to see the claim' },
    );
    // Its metric, from the line each run logs: once every run's is in, the last is the claim's age.
    await waitFor(async () => (await statisticOf('OldestPendingBatchAge', 'SampleCount')) >= runs, {
      timeoutMs: DEADLINE_MS,
      what: 'every run’s OldestPendingBatchAge to be published',
    });
    const [age] =
      (
        await cw.send(
          new GetMetricStatisticsCommand(overAnHour('OldestPendingBatchAge', ['Maximum'])),
        )
      ).Datapoints ?? [];
    expect(age?.Maximum).toBeGreaterThanOrEqual(1200);
    expect(age?.Unit).toBe('Seconds');
    // Fifteen minutes by default; the batch is 20 minutes old.
    const fired = await alarm('AlarmsOldestPendingBatchAge');
    expect(fired.Threshold).toBe(900);
    expect(fired.StateValue).toBe('ALARM');
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
    // One whose metric has no data here: created again, it is OK (no events came after final).
    const before = await alarm('AlarmsLateAfterFinal');
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
    expect(await alarm('AlarmsLateAfterFinal')).toMatchObject({
      StateValue: 'OK',
      MetricName: 'LateAfterFinal',
      Period: 300,
    });
  });

  it('answers the AWS SDK for JavaScript v2, which speaks CloudWatch’s query protocol', async () => {
    const v2 = new AWS.CloudWatch({
      endpoint: runtime.endpoint,
      region: runtime.region,
      credentials: new AWS.Credentials(LOCAL_CREDENTIALS),
    });
    const fired = await v2
      .describeAlarms({ AlarmNamePrefix: `${runtime.stack.stackName}-`, StateValue: 'ALARM' })
      .promise();
    // The same alarms the v3 client sees firing, timestamps and dimensions in the query's XML.
    const v3 = (await alarms()).filter((a) => a.StateValue === 'ALARM');
    expect(fired.MetricAlarms?.map((a) => a.AlarmName).sort()).toEqual(
      v3.map((a) => a.AlarmName).sort(),
    );
    const dlq = fired.MetricAlarms?.find((a) => a.AlarmName?.includes('ordersDlqMessages'));
    expect(dlq?.StateUpdatedTimestamp).toBeInstanceOf(Date);
    expect(dlq?.Dimensions).toEqual([{ Name: 'QueueName', Value: expect.any(String) }]);
    expect(dlq?.Threshold).toBe(1);

    const { AlarmName = '' } = await alarm('AlarmsLateAfterFinal');
    await v2.disableAlarmActions({ AlarmNames: [AlarmName] }).promise();
    expect((await alarm('AlarmsLateAfterFinal')).ActionsEnabled).toBe(false);
    await v2.enableAlarmActions({ AlarmNames: [AlarmName] }).promise();
    expect((await alarm('AlarmsLateAfterFinal')).ActionsEnabled).toBe(true);

    const figures = await v2.getMetricStatistics(rejectedOverAnHour(['Sum'])).promise();
    expect(figures.Datapoints?.map((d) => d.Sum)).toEqual([1]);
    const data = await v2
      .getMetricData({
        ...rejectedPerMinute(),
      })
      .promise();
    expect(data.MetricDataResults?.[0]?.Values).toEqual([1]);
    expect(data.MetricDataResults?.[0]?.Timestamps?.[0]).toBeInstanceOf(Date);
    await expect(
      v2
        .setAlarmState({ AlarmName: 'no-such-alarm', StateValue: 'OK', StateReason: 'x' })
        .promise(),
    ).rejects.toMatchObject({ code: 'ResourceNotFound', statusCode: 404 });
  });

  it('answers a client speaking CloudWatch’s Smithy RPC v2 CBOR protocol, botocore’s first choice', async () => {
    const paths: string[] = [];
    const overCbor = new CloudWatchClient({
      endpoint: runtime.endpoint,
      region: runtime.region,
      credentials: LOCAL_CREDENTIALS,
      protocol: SmithyRpcV2CborProtocol,
    });
    overCbor.middlewareStack.add(
      (next) => async (args) => {
        if (HttpRequest.isInstance(args.request))
          paths.push(`${args.request.headers['smithy-protocol']} ${args.request.path}`);
        return next(args);
      },
      { step: 'finalizeRequest' },
    );
    try {
      const { AlarmName } = await alarm('AlarmsordersDlqMessages');
      const out = await overCbor.send(new DescribeAlarmsCommand({ AlarmNames: [AlarmName ?? ''] }));
      expect(out.MetricAlarms?.[0]).toMatchObject({ AlarmName, StateValue: 'ALARM', Threshold: 1 });
      // Timestamps arrive as CBOR's tagged epoch seconds, read back as dates.
      expect(out.MetricAlarms?.[0]?.StateUpdatedTimestamp).toBeInstanceOf(Date);
      const data = await overCbor.send(
        new GetMetricDataCommand({
          MetricDataQueries: [
            {
              Id: 'visible',
              MetricStat: {
                Metric: {
                  Namespace: 'AWS/SQS',
                  MetricName: 'ApproximateNumberOfMessagesVisible',
                  Dimensions: out.MetricAlarms?.[0]?.Dimensions,
                },
                Period: 60,
                Stat: 'Maximum',
              },
            },
          ],
          StartTime: new Date(Date.now() - 3_600_000),
          EndTime: new Date(Date.now() + 60_000),
        }),
      );
      // A list of timestamps, each tagged.
      expect(data.MetricDataResults?.[0]?.Timestamps?.every((t) => t instanceof Date)).toBe(true);
      expect(data.MetricDataResults?.[0]?.Values?.[0]).toBe(1);
      await expect(
        overCbor.send(
          new SetAlarmStateCommand({
            AlarmName: 'no-such-alarm',
            StateValue: 'OK',
            StateReason: 'x',
          }),
        ),
      ).rejects.toBeInstanceOf(ResourceNotFound);
      expect(paths).toEqual([
        'rpc-v2-cbor /service/GraniteServiceVersion20100801/operation/DescribeAlarms',
        'rpc-v2-cbor /service/GraniteServiceVersion20100801/operation/GetMetricData',
        'rpc-v2-cbor /service/GraniteServiceVersion20100801/operation/SetAlarmState',
      ]);
    } finally {
      overCbor.destroy();
    }
  });

  it.skipIf(!awsCliVersion)(
    'answers the AWS CLI’s cloudwatch commands, in the protocol it speaks',
    async () => {
      const described = await awsCli(
        runtime,
        'cloudwatch',
        'describe-alarms',
        '--alarm-name-prefix',
        `${runtime.stack.stackName}-`,
        '--state-value',
        'ALARM',
        '--output',
        'json',
      );
      expect(described.status, described.stderr).toBe(0);
      const { MetricAlarms } = parseJson(
        v.object({
          MetricAlarms: v.array(
            v.object({ AlarmName: v.string(), StateValue: v.string(), Threshold: v.number() }),
          ),
        }),
        described.stdout,
      );
      const v3 = (await alarms()).filter((a) => a.StateValue === 'ALARM');
      expect(MetricAlarms.map((a) => a.AlarmName).sort()).toEqual(
        v3.map((a) => a.AlarmName).sort(),
      );
      expect(MetricAlarms.length).toBeGreaterThan(0);

      const missing = await awsCli(
        runtime,
        'cloudwatch',
        'set-alarm-state',
        '--alarm-name',
        'no-such-alarm',
        '--state-value',
        'OK',
        '--state-reason',
        'x',
      );
      expect(missing.status).not.toBe(0);
      expect(missing.stderr).toContain('ResourceNotFound');
    },
  );
});
