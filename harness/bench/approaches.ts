/**
 * The ways to apply the same order batches that the benchmark compares, each behind the same
 * SQS-shaped handler and measured with the same meter:
 *  - onceflow: the real ingest and aggregate handlers (here);
 *  - naive, powertools (keyed per SQS message) and powertools-per-event (`baselines.ts`).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { AwsClients } from '../../adapters/clients.ts';
import { touchesLedgerOf } from '../../adapters/dynamo.ts';
import { DynamoOrderReader } from '../../adapters/dynamo-order-reader.ts';
import { S3Store } from '../../adapters/s3.ts';
import { aggregateDependencies, ingestPorts, ingestSettings } from '../../adapters/wiring.ts';
import { createAggregateHandler } from '../../functions/aggregate-hours.ts';
import { createIngestHandler } from '../../functions/ingest-orders.ts';
import { adminClients } from '../../local/clients.ts';
import { drainQueue } from '../../local/drain.ts';
import { LOCAL_REGION } from '../../local/emulators.ts';
import { lambdaContext } from '../../local/lambda-context.ts';
import { loadAggregateConfig, loadIngestConfig } from '../../shared/config.ts';
import { REJECT_PREFIX } from '../../shared/keys.ts';
import { FaultInjector } from '../faults.ts';
import type { ModelHour } from '../model.ts';
import { clientConfig, deliver, memoryOf, stackCopy } from './deliver.ts';
import { CapacityMeter, RequestMeter } from './meter.ts';

export interface Message {
  readonly messageId: string;
  readonly batchId: string;
  readonly body: string;
  /** Messages of a later wave are sent after every earlier one was processed. Default 0. */
  readonly wave?: number;
}

export interface PassOptions {
  /** Batches whose first processing crashes right after the business writes. */
  readonly crashBatches?: ReadonlySet<string>;
}

export interface PassState {
  readonly orders: {
    orderId: string;
    customerId: string;
    status: string;
    amount: string;
    currency: string;
    eventTime: string;
  }[];
  readonly hourly: ModelHour[];
  /** Event conflicts the approach reported (undefined: it has no way to report them). */
  readonly conflictsReported?: number;
}

export interface PassMeasure {
  readonly writeUnits: number;
  /** Of them, spent keeping the watermark. */
  readonly watermarkWriteUnits: number;
  readonly readUnits: number;
  readonly requests: number;
  /** Write units billed for failed conditions, by operation (part of writeUnits). */
  readonly failedConditionUnits: Record<string, number>;
  /** Write units spent in each wave: the second is what the redelivered batches cost. */
  readonly waveWriteUnits: readonly number[];
  readonly ingestMs: number;
  readonly s3Requests: number;
  readonly hoursWritten: number;
  readonly invocations: number;
  readonly s3PutRequests: number;
  readonly s3GetRequests: number;
  /** SQS requests as billed (64 KB chunks): sends, receives and deletes, both queues. */
  readonly sqsRequests: number;
  /** Of them, to FIFO queues. */
  readonly sqsFifoRequests: number;
  readonly lambdaInvocations: number;
  /** Billed duration of every invocation, summed (whole ms each). */
  readonly lambdaBilledMs: number;
  /** The same durations at each function's configured memory. */
  readonly lambdaGbSeconds: number;
}

export interface Approach {
  readonly name: string;
  runPass(
    messages: readonly Message[],
    options: PassOptions,
  ): Promise<{ measure: PassMeasure; state: PassState }>;
}

// ---------------------------------------------------------------- onceflow

export const onceflowApproach = (endpoint: string, assemblyDir: string): Approach => ({
  name: 'onceflow',
  async runPass(messages, options) {
    const admin = adminClients(endpoint, LOCAL_REGION);
    const copy = await stackCopy(endpoint, assemblyDir);
    const table = copy.outputs.TableName ?? '';
    const bucket = copy.outputs.BucketName ?? '';
    const { url: queueUrl, arn: queueArn } = copy.queues.aggregate;
    const meter = new CapacityMeter();
    const requests = new RequestMeter();
    const faults = new FaultInjector();
    const clients: AwsClients = {
      dynamo: faults.attach(meter.attach(new DynamoDBClient(clientConfig(endpoint)))),
      s3: faults.attach(
        requests.attach(new S3Client({ ...clientConfig(endpoint), forcePathStyle: true }), 's3'),
      ),
      sqs: requests.attach(new SQSClient(clientConfig(endpoint)), 'sqs'),
    };
    for (const batchId of options.crashBatches ?? []) {
      faults.add({
        site: 'TransactWriteItems',
        kind: 'crash-after',
        when: touchesLedgerOf(batchId),
      });
    }
    const ingestConfig = loadIngestConfig(copy.ingestEnvironment);
    const ingest = createIngestHandler({
      ports: ingestPorts(ingestConfig, clients),
      settings: ingestSettings(ingestConfig),
    });
    const started = performance.now();
    const delivered = await deliver(
      copy,
      messages,
      ingest,
      () => lambdaContext('ingest-orders', 30_000),
      meter,
      requests,
    );
    const ingestMs = performance.now() - started;
    const s3Before = [...faults.calls.entries()]
      .filter(([site]) => site.includes(':aggregates'))
      .reduce((s, [, n]) => s + n, 0);
    const aggregate = createAggregateHandler(
      aggregateDependencies(loadAggregateConfig(copy.aggregateEnvironment), clients),
    );
    const invokeAggregate = requests.timed(aggregate, memoryOf(copy, 'AggregateFunctionName'));
    const { invocations } = await drainQueue({
      // The aggregate queue's event source mapping: its receives and deletes are billed too.
      sqs: requests.attach(adminClients(endpoint, LOCAL_REGION).sqs, 'sqs'),
      queueUrl,
      queueArn,
      region: LOCAL_REGION,
      invoke: (_, event) => invokeAggregate(event, lambdaContext('aggregate-hours', 30_000)),
    });
    const s3Requests =
      [...faults.calls.entries()]
        .filter(([site]) => site.includes(':aggregates'))
        .reduce((s, [, n]) => s + n, 0) - s3Before;
    const hourly = await new S3Store(admin.s3, bucket).listAggregates();
    return {
      measure: {
        ...meter.snapshot(),
        ...requests.snapshot(),
        ingestMs,
        s3Requests,
        hoursWritten: faults.calls.get('PutObject:aggregates') ?? 0,
        invocations: delivered.invocations + invocations,
        waveWriteUnits: delivered.waveWriteUnits,
      },
      state: {
        orders: await new DynamoOrderReader(admin.dynamo, table).listOrders(),
        hourly: hourly.map(({ hour, events, byStatus }) => ({ hour, events, byStatus })),
        conflictsReported: await eventConflicts(new S3Store(admin.s3, bucket)),
      },
    };
  },
});

/** Event conflicts in the quarantine (one object per batch and event). */
const eventConflicts = async (store: S3Store): Promise<number> => {
  let n = 0;
  for (const key of await store.listKeys(REJECT_PREFIX)) {
    const text = (await store.getText(key)) ?? '';
    if (text.includes('"reason":"event-conflict"')) n++;
  }
  return n;
};
