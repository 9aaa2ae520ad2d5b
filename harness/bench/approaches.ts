/**
 * The three ways to apply the same order batches that the benchmark compares, each behind the
 * same SQS-shaped handler and measured with the same meter:
 *  - onceflow: the real ingest and aggregate handlers;
 *  - naive: one unconditional PutItem per event and counters with plain ADD;
 *  - powertools: the same naive writes made idempotent per SQS message with Powertools'
 *    idempotency utility and its DynamoDB persistence layer, as its documentation shows.
 */
import { randomUUID } from 'node:crypto';
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { AwsClients } from '../../adapters/clients.ts';
import { DynamoOrderStore, touchesLedgerOf } from '../../adapters/dynamo.ts';
import { S3Store } from '../../adapters/s3.ts';
import { sendBodies } from '../../adapters/sqs.ts';
import { aggregatorPorts, ingestPorts, ingestSettings } from '../../adapters/wiring.ts';
import { createAggregateHandler } from '../../functions/aggregate-hours.ts';
import { createIngestHandler } from '../../functions/ingest-orders.ts';
import { adminClients } from '../../local/clients.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/emulators.ts';
import { lambdaContext } from '../../local/lambda-context.ts';
import { drainQueue } from '../../local/sqs-poller.ts';
import { provisionStackCopy, type StackCopy } from '../../local/stack-copy.ts';
import { loadAggregateConfig, loadIngestConfig } from '../../shared/config.ts';
import { FaultInjector, InjectedCrash } from '../faults.ts';
import type { ModelHour } from '../model.ts';
import { CapacityMeter } from './meter.ts';
import { naiveState, naiveWrites, parseBatch } from './naive.ts';
import { createBaselineTable } from './tables.ts';

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
}

export interface PassMeasure {
  readonly writeUnits: number;
  readonly readUnits: number;
  readonly requests: number;
  readonly ingestMs: number;
  readonly s3Requests: number;
  readonly hoursWritten: number;
  readonly invocations: number;
}

export interface Approach {
  readonly name: string;
  runPass(
    messages: readonly Message[],
    options: PassOptions,
  ): Promise<{ measure: PassMeasure; state: PassState }>;
}

const config = (endpoint: string) => ({
  endpoint,
  region: LOCAL_REGION,
  credentials: LOCAL_CREDENTIALS,
});
const unique = (prefix: string) =>
  `${prefix}-${Date.now().toString(36)}-${randomUUID().slice(0, 8)}`;

const createTable = createBaselineTable;

/**
 * Sends each wave to the stack copy's orders queue and runs the event source mapping (the local
 * runtime's poller) over it until it is drained: a failed message comes back with its message id,
 * as a redelivery does, and a later wave is sent once every earlier one was processed.
 */
const deliver = async (
  copy: StackCopy,
  messages: readonly Message[],
  handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>,
  contextFor: () => Context,
  beforeRetry?: () => Promise<void>,
) => {
  const sqs = adminClients(copy.ingestEnvironment.AWS_ENDPOINT_URL ?? '', LOCAL_REGION).sqs;
  const queue = copy.queues.orders;
  let invocations = 0;
  const waves = [...new Set(messages.map((m) => m.wave ?? 0))].sort((a, b) => a - b);
  for (const wave of waves) {
    const bodies = messages.filter((m) => (m.wave ?? 0) === wave).map((m) => m.body);
    await sendBodies(sqs, queue.url, bodies);
    const drained = await drainQueue({
      sqs,
      queueUrl: queue.url,
      queueArn: queue.arn,
      region: LOCAL_REGION,
      invoke: (_, event) => handler(event, contextFor()),
      timeoutMs: 900_000,
      ...(beforeRetry
        ? {
            onBatch: async (report) => {
              if (report.failedIds.length > 0) await beforeRetry();
            },
          }
        : {}),
    });
    invocations += drained.invocations;
  }
  return invocations;
};

/** A copy of the synthesized stack for one pass: its orders queue feeds every approach. */
const stackCopy = (endpoint: string, assemblyDir: string) =>
  provisionStackCopy({ assemblyDir, endpoint, name: unique('bench') });

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
    const faults = new FaultInjector();
    const clients: AwsClients = {
      dynamo: faults.attach(meter.attach(new DynamoDBClient(config(endpoint)))),
      s3: faults.attach(new S3Client({ ...config(endpoint), forcePathStyle: true })),
      sqs: new SQSClient(config(endpoint)),
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
    const ingestInvocations = await deliver(copy, messages, ingest, () =>
      lambdaContext('ingest-orders', 30_000),
    );
    const ingestMs = performance.now() - started;
    const s3Before = [...faults.calls.entries()]
      .filter(([site]) => site.includes(':aggregates'))
      .reduce((s, [, n]) => s + n, 0);
    const aggregate = createAggregateHandler({
      ports: aggregatorPorts(loadAggregateConfig(copy.aggregateEnvironment), clients),
      quarantine: new S3Store(clients.s3, bucket),
    });
    const { invocations } = await drainQueue({
      sqs: admin.sqs,
      queueUrl,
      queueArn,
      region: LOCAL_REGION,
      invoke: (_, event) => aggregate(event, lambdaContext('aggregate-hours', 30_000)),
    });
    const s3Requests =
      [...faults.calls.entries()]
        .filter(([site]) => site.includes(':aggregates'))
        .reduce((s, [, n]) => s + n, 0) - s3Before;
    const hourly = await new S3Store(admin.s3, bucket).listAggregates();
    return {
      measure: {
        ...meter.snapshot(),
        ingestMs,
        s3Requests,
        hoursWritten: faults.calls.get('PutObject:aggregates') ?? 0,
        invocations: ingestInvocations + invocations,
      },
      state: {
        orders: await new DynamoOrderStore(admin.dynamo, table).listOrders(),
        hourly: hourly.map(({ hour, events, byStatus }) => ({ hour, events, byStatus })),
      },
    };
  },
});

export const naiveApproach = (endpoint: string, assemblyDir: string): Approach => ({
  name: 'naive',
  async runPass(messages, options) {
    const copy = await stackCopy(endpoint, assemblyDir);
    // The baseline's own table (its layout is not onceflow's); the queue is the stack's.
    const table = unique('bench-naive');
    await createTable(new DynamoDBClient(config(endpoint)), table);
    const meter = new CapacityMeter();
    const dynamo = meter.attach(new DynamoDBClient(config(endpoint)));
    const crashed = new Set<string>();
    const recordHandler = async (record: SQSRecord) => {
      const batch = parseBatch(record.body);
      await naiveWrites(dynamo, table, batch);
      if (options.crashBatches?.has(batch.batchId) && !crashed.has(batch.batchId)) {
        crashed.add(batch.batchId);
        throw new InjectedCrash(`crash after the writes of ${batch.batchId}`);
      }
    };
    const handler = (event: SQSEvent, context: Context) =>
      processPartialResponse(event, recordHandler, new BatchProcessor(EventType.SQS), { context });
    const started = performance.now();
    const invocations = await deliver(copy, messages, handler, () =>
      lambdaContext('naive', 30_000),
    );
    const ingestMs = performance.now() - started;
    return {
      measure: { ...meter.snapshot(), ingestMs, s3Requests: 0, hoursWritten: 0, invocations },
      state: await naiveState(new DynamoDBClient(config(endpoint)), table),
    };
  },
});

export const powertoolsApproach = (endpoint: string, assemblyDir: string): Approach => ({
  name: 'powertools',
  async runPass(messages, options) {
    const copy = await stackCopy(endpoint, assemblyDir);
    // The baseline's own tables (its layout and Powertools' store); the queue is the stack's.
    const table = unique('bench-powertools');
    const idempotencyTable = unique('bench-idempotency');
    const admin = new DynamoDBClient(config(endpoint));
    await createTable(admin, table);
    await createTable(admin, idempotencyTable, 'id', null);
    const meter = new CapacityMeter();
    const faults = new FaultInjector();
    const dynamo = faults.attach(meter.attach(new DynamoDBClient(config(endpoint))));
    // A crash between the business writes and Powertools' completion update: the update never happens.
    for (const batchId of options.crashBatches ?? []) {
      faults.add({
        site: 'UpdateItem',
        kind: 'crash-before',
        when: (input) => {
          const i = input as {
            TableName?: string;
            ExpressionAttributeValues?: Record<string, { S?: string }>;
          };
          return (
            i.TableName === idempotencyTable &&
            JSON.stringify(i.ExpressionAttributeValues ?? {}).includes(batchId)
          );
        },
      });
    }
    const persistenceStore = new DynamoDBPersistenceLayer({
      tableName: idempotencyTable,
      awsSdkV3Client: dynamo,
    });
    // Keyed per SQS message, as the documentation shows for SQS batches.
    const idempotency = new IdempotencyConfig({ eventKeyJmesPath: 'messageId' });
    const processRecord = makeIdempotent(
      async (record: SQSRecord) => {
        await naiveWrites(dynamo, table, parseBatch(record.body));
        return parseBatch(record.body).batchId;
      },
      { persistenceStore, config: idempotency },
    );
    const handler = (event: SQSEvent, context: Context) => {
      idempotency.registerLambdaContext(context);
      return processPartialResponse(event, processRecord, new BatchProcessor(EventType.SQS), {
        context,
      });
    };
    const started = performance.now();
    // A short remaining time lets an in-progress record of a crashed attempt expire before the redelivery.
    const invocations = await deliver(
      copy,
      messages,
      handler,
      () => lambdaContext('powertools', 50),
      () => new Promise((r) => setTimeout(r, 120)),
    );
    const ingestMs = performance.now() - started;
    return {
      measure: { ...meter.snapshot(), ingestMs, s3Requests: 0, hoursWritten: 0, invocations },
      state: await naiveState(admin, table),
    };
  },
});
