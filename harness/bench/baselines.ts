/**
 * The baselines the benchmark compares onceflow with, each on its own tables and fed from the
 * same stack copy's queue:
 *  - naive: one unconditional PutItem per event and counters with plain ADD;
 *  - powertools: the same naive writes made idempotent per SQS message with Powertools'
 *    idempotency utility and its DynamoDB persistence layer, as its documentation shows;
 *  - powertools-per-event: the same writes made idempotent per event.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { lambdaContext } from '../../local/lambda-context.ts';
import type { StackCopy } from '../../local/stack-copy.ts';
import { mapLimit } from '../../shared/concurrency.ts';
import { FaultInjector, InjectedCrash } from '../faults.ts';
import type { GeneratedEvent } from '../generate.ts';
import type { Approach, Message, PassMeasure, PassState } from './approaches.ts';
import { clientConfig, deliver, stackCopy, unique } from './deliver.ts';
import { CapacityMeter, RequestMeter } from './meter.ts';
import { naiveState, naiveWrites, parseBatch } from './naive.ts';
import { createBaselineTable } from './tables.ts';

/** Delivers a pass to a baseline's handler and measures it; baselines write no S3 objects. */
const baselinePass = async (o: {
  copy: StackCopy;
  messages: readonly Message[];
  handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;
  name: string;
  meter: CapacityMeter;
  requests: RequestMeter;
  remainingMs?: number;
  beforeRetry?: () => Promise<void>;
  state: () => Promise<PassState>;
}): Promise<{ measure: PassMeasure; state: PassState }> => {
  const started = performance.now();
  const { invocations, waveWriteUnits } = await deliver(
    o.copy,
    o.messages,
    o.handler,
    () => lambdaContext(o.name, o.remainingMs ?? 30_000),
    o.meter,
    o.requests,
    o.beforeRetry,
  );
  const ingestMs = performance.now() - started;
  return {
    measure: {
      ...o.meter.snapshot(),
      ...o.requests.snapshot(),
      ingestMs,
      s3Requests: 0,
      hoursWritten: 0,
      invocations,
      waveWriteUnits,
    },
    state: await o.state(),
  };
};

export const naiveApproach = (endpoint: string, assemblyDir: string): Approach => ({
  name: 'naive',
  async runPass(messages, options) {
    const copy = await stackCopy(endpoint, assemblyDir);
    // The baseline's own table (its layout is not onceflow's); the queue is the stack's.
    const table = unique('bench-naive');
    await createBaselineTable(new DynamoDBClient(clientConfig(endpoint)), table);
    const meter = new CapacityMeter();
    const dynamo = meter.attach(new DynamoDBClient(clientConfig(endpoint)));
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
    return baselinePass({
      copy,
      messages,
      handler,
      name: 'naive',
      meter,
      requests: new RequestMeter(),
      state: () => naiveState(new DynamoDBClient(clientConfig(endpoint)), table),
    });
  },
});

export const powertoolsApproach = (endpoint: string, assemblyDir: string): Approach => ({
  name: 'powertools',
  async runPass(messages, options) {
    const copy = await stackCopy(endpoint, assemblyDir);
    // The baseline's own tables (its layout and Powertools' store); the queue is the stack's.
    const table = unique('bench-powertools');
    const idempotencyTable = unique('bench-idempotency');
    const admin = new DynamoDBClient(clientConfig(endpoint));
    await createBaselineTable(admin, table);
    await createBaselineTable(admin, idempotencyTable, 'id', null);
    const meter = new CapacityMeter();
    const faults = new FaultInjector();
    const dynamo = faults.attach(meter.attach(new DynamoDBClient(clientConfig(endpoint))));
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
    return baselinePass({
      copy,
      messages,
      handler,
      name: 'powertools',
      meter,
      requests: new RequestMeter(),
      // A short remaining time lets an in-progress record of a crashed attempt expire before
      // the redelivery.
      remainingMs: 50,
      beforeRetry: () => new Promise((r) => setTimeout(r, 120)),
      state: () => naiveState(admin, table),
    });
  },
});

/**
 * Powertools' documented per-record idempotency with the event as the record: `makeIdempotent`
 * around each event of a batch, keyed by (orderId, eventId). Counts come out exact whatever
 * batches re-send an event, but every event pays its own persistence writes (an in-progress
 * record and its completion), a conflicting re-send is silently skipped, and the state is the
 * naive writer's (last writer wins).
 */
export const powertoolsPerEventApproach = (endpoint: string, assemblyDir: string): Approach => ({
  name: 'powertools-per-event',
  async runPass(messages, options) {
    const copy = await stackCopy(endpoint, assemblyDir);
    const table = unique('bench-powertools-event');
    const idempotencyTable = unique('bench-idempotency-event');
    const admin = new DynamoDBClient(clientConfig(endpoint));
    await createBaselineTable(admin, table);
    await createBaselineTable(admin, idempotencyTable, 'id', null);
    const meter = new CapacityMeter();
    const dynamo = meter.attach(new DynamoDBClient(clientConfig(endpoint)));
    const persistenceStore = new DynamoDBPersistenceLayer({
      tableName: idempotencyTable,
      awsSdkV3Client: dynamo,
    });
    const idempotency = new IdempotencyConfig({ eventKeyJmesPath: '[orderId, eventId]' });
    const processEvent = makeIdempotent(
      async (event: GeneratedEvent) => {
        await naiveWrites(dynamo, table, { batchId: '', events: [event] });
        return event.eventId;
      },
      { persistenceStore, config: idempotency },
    );
    const crashed = new Set<string>();
    const recordHandler = async (record: SQSRecord) => {
      const batch = parseBatch(record.body);
      await mapLimit(batch.events, 16, processEvent);
      // A crash after every event completed: the redelivery finds each one done.
      if (options.crashBatches?.has(batch.batchId) && !crashed.has(batch.batchId)) {
        crashed.add(batch.batchId);
        throw new InjectedCrash(`crash after the writes of ${batch.batchId}`);
      }
    };
    const handler = (event: SQSEvent, context: Context) => {
      idempotency.registerLambdaContext(context);
      return processPartialResponse(event, recordHandler, new BatchProcessor(EventType.SQS), {
        context,
      });
    };
    return baselinePass({
      copy,
      messages,
      handler,
      name: 'powertools-per-event',
      meter,
      requests: new RequestMeter(),
      state: () => naiveState(admin, table),
    });
  },
});
