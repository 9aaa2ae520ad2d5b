/**
 * A fresh pipeline per test: its own copy of the synthesized stack on the shared emulators, the
 * production wiring (config parsed from the environment the template gives), and clients
 * that carry a fault injector.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse } from 'aws-lambda';
import * as v from 'valibot';
import { inject } from 'vitest';
import type { AwsClients } from '../../adapters/clients.ts';
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { DynamoOrderReader } from '../../adapters/dynamo-order-reader.ts';
import { S3Store } from '../../adapters/s3.ts';
import { readRejects } from '../../adapters/s3-quarantine.ts';
import {
  aggregateDependencies,
  finalizerPorts,
  finalizerSettings,
  ingestPorts,
  ingestSettings,
} from '../../adapters/wiring.ts';
import { verify } from '../../cli/commands/reconcile.ts';
import type { Target } from '../../cli/target.ts';
import { createAggregateHandler } from '../../functions/aggregate-hours.ts';
import { createIngestHandler } from '../../functions/ingest-orders.ts';
import { FaultInjector } from '../../harness/faults.ts';
import { drainQueue } from '../../local/drain.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/emulators.ts';
import { lambdaContext } from '../../local/lambda-context.ts';
import { snapshotTable } from '../../local/snapshot.ts';
import { toSqsEvent, toSqsRecord } from '../../local/sqs-event.ts';
import { provisionStackCopy } from '../../local/stack-copy.ts';
import { HourAggregateSchema } from '../../shared/aggregate.ts';
import { loadAggregateConfig, loadFinalizeConfig, loadIngestConfig } from '../../shared/config.ts';
import { type FinalizerPorts, finalizeHours } from '../../shared/finalizer.ts';
import type { IngestPorts } from '../../shared/ingest.ts';
import { AGGREGATE_PREFIX, hourOfObjectKey } from '../../shared/keys.ts';
import type { OrderView } from '../../shared/order-state.ts';

import { parseJson } from './json.ts';
import { uniqueName } from './names.ts';

export { uniqueName };

export interface Delivery {
  readonly body: string;
  /** The SQS message id: the same on a redelivery, new after a DLQ redrive. */
  readonly messageId?: string;
  readonly receiveCount?: number;
}

export interface HourView {
  readonly hour: string;
  readonly events: number;
  readonly byStatus: Record<string, { events: number; amounts: Record<string, string> }>;
}

export interface PipelineOptions {
  readonly env?: Record<string, string>;
  /** Emulators of the test's own (an edge set up differently); default the suite's. */
  readonly endpoint?: string;
}

export const clientConfig = (endpoint = inject('endpoint')) => ({
  endpoint,
  region: LOCAL_REGION,
  credentials: LOCAL_CREDENTIALS,
});

export const createAdminClients = (endpoint?: string): AwsClients => ({
  dynamo: new DynamoDBClient(clientConfig(endpoint)),
  s3: new S3Client({ ...clientConfig(endpoint), forcePathStyle: true }),
  sqs: new SQSClient(clientConfig(endpoint)),
});

/** Sends one message to the aggregate queue as any producer could (FIFO fields when it is). */
export const aggregateQueueSender = (sqs: SQSClient, queueUrl: string) => async (body: string) => {
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: body,
      ...(queueUrl.endsWith('.fifo')
        ? { MessageGroupId: 'test', MessageDeduplicationId: randomUUID() }
        : {}),
    }),
  );
};

/** Delivers each body until it succeeds (SQS redelivering a failed message), up to `attempts`. */
export const redeliverUntilDone =
  (ingest: (deliveries: readonly Delivery[]) => Promise<SQSBatchResponse>) =>
  async (bodies: readonly string[], attempts = 6) => {
    for (const body of bodies) {
      const messageId = randomUUID();
      for (let attempt = 1; ; attempt++) {
        const res = await ingest([{ body, messageId, receiveCount: attempt }]);
        if (res.batchItemFailures.length === 0) break;
        if (attempt >= attempts)
          throw new Error(`message still failing after ${attempts} deliveries`);
      }
    }
  };

/** The SQS records of a set of deliveries, as the event source mapping would build them. */
export const recordsOf = (deliveries: readonly Delivery[], queueArn: string) =>
  deliveries.map((d) =>
    toSqsRecord(
      {
        MessageId: d.messageId ?? randomUUID(),
        ReceiptHandle: randomUUID(),
        Body: d.body,
        Attributes: {
          ApproximateReceiveCount: String(d.receiveCount ?? 1),
          SentTimestamp: String(Date.now()),
        },
      },
      queueArn,
      LOCAL_REGION,
    ),
  );

/** An hour object as published: exactly the fields the readers' schema knows. */
const StoredHourSchema = v.strictObject(HourAggregateSchema.entries);

/** Reading what a pipeline left behind: orders, hour objects, rejects, raw table items. */
export const stateViews = (admin: AwsClients, tableName: string, bucketName: string) => {
  const orders = (): Promise<OrderView[]> =>
    new DynamoOrderReader(admin.dynamo, tableName).listOrders();

  const store = new S3Store(admin.s3, bucketName);
  const listKeys = (prefix: string): Promise<string[]> => store.listKeys(prefix);

  /** An object's text; undefined when there is none. */
  const readText = (key: string) => store.getText(key);

  /**
   * The published hour objects, as stored (with revision, computedAt and lifecycle). Strict: a
   * field the readers' schema does not know fails here, so the schema keeps up with the writer.
   */
  const hourObjects = async () =>
    Promise.all(
      (await listKeys(AGGREGATE_PREFIX))
        .filter((key) => hourOfObjectKey(key) !== undefined)
        .map(async (key) => ({
          key,
          body: parseJson(StoredHourSchema, (await readText(key)) ?? 'null'),
        })),
    );

  /** The published hours in the shape of expected-hourly.json. */
  const hourly = async (): Promise<HourView[]> =>
    (await hourObjects())
      .map(({ body: { hour, events, byStatus } }) => ({ hour, events, byStatus }))
      .sort((a, b) => (a.hour < b.hour ? -1 : 1));

  /** The quarantine's objects, validated as `onceflow rejects` reads them. */
  const rejects = () => readRejects(store);

  /** Every item in the table (to prove that nothing changed). */
  const tableItems = async () =>
    [...(await snapshotTable(admin.dynamo, tableName)).items].sort((a, b) =>
      `${a.pk?.S}${a.sk?.S}`.localeCompare(`${b.pk?.S}${b.sk?.S}`),
    );

  /** The batch ids the ledger holds, applied and pending. */
  const ledgerBatches = () => new DynamoLedger(admin.dynamo, tableName).batches();
  /** Ledger entries whose parts are not all committed (each must end committed). */
  const pendingBatches = async () => (await ledgerBatches()).pending;

  /** The pipeline's table and bucket as the CLI's commands see a stack. */
  const outputs: Record<string, string> = { TableName: tableName, BucketName: bucketName };
  const target: Target = {
    kind: 'local',
    endpoint: undefined,
    region: LOCAL_REGION,
    stackName: 'test',
    clients: admin,
    outputs,
    output: (name) => outputs[name] ?? '',
  };

  /** `onceflow verify` over the pipeline's table and bucket: the hour objects that disagree. */
  const verifyHours = async () => verify(target);

  return {
    orders,
    hourly,
    hourObjects,
    readText,
    rejects,
    listKeys,
    tableItems,
    pendingBatches,
    ledgerBatches,
    verifyHours,
    target,
  };
};

export const createPipeline = async (options: PipelineOptions = {}) => {
  const endpoint = options.endpoint ?? inject('endpoint');
  const admin = createAdminClients(endpoint);
  // A copy of the synthesized stack: its queues, table and bucket exactly as the template says,
  // and each function's environment as the template gives it.
  const copy = await provisionStackCopy({
    assemblyDir: inject('assembly').assemblyDir,
    endpoint,
    name: uniqueName('pipe'),
  });
  const tableName = copy.outputs.TableName ?? '';
  const bucketName = copy.outputs.BucketName ?? '';
  const aggregateQueueUrl = copy.queues.aggregate.url;
  const env = { ...copy.ingestEnvironment, ...options.env };
  const ingestConfig = loadIngestConfig(env);
  const aggregateConfig = loadAggregateConfig({ ...copy.aggregateEnvironment, ...options.env });
  const faults = new FaultInjector();
  const clients: AwsClients = {
    dynamo: faults.attach(new DynamoDBClient(clientConfig(endpoint))),
    s3: faults.attach(new S3Client({ ...clientConfig(endpoint), forcePathStyle: true })),
    sqs: faults.attach(new SQSClient(clientConfig(endpoint))),
  };
  let now = Date.now;
  const ports: IngestPorts = { ...ingestPorts(ingestConfig, clients), now: () => now() };
  const ingestHandler = createIngestHandler({ ports, settings: ingestSettings(ingestConfig) });
  const aggregateHandler = createAggregateHandler(aggregateDependencies(aggregateConfig, clients));
  const finalizeConfig = loadFinalizeConfig({ ...copy.finalizeEnvironment, ...options.env });
  /**
   * One run of the finalizer, as its scheduled rule starts it (on the pipeline's clock); a port
   * can be replaced, e.g. to show the pending index lagging.
   */
  const finalize = (replaced: Partial<FinalizerPorts> = {}) =>
    finalizeHours(
      { ...finalizerPorts(finalizeConfig, clients), now: () => now(), ...replaced },
      finalizerSettings(finalizeConfig),
    );

  /** Invokes the ingest function once with these messages as one SQS batch. */
  const ingest = async (deliveries: readonly Delivery[]): Promise<SQSBatchResponse> => {
    const records = recordsOf(deliveries, 'arn:aws:sqs:us-east-1:000000000000:orders');
    try {
      return await ingestHandler(toSqsEvent(records), lambdaContext('ingest-orders', 30_000));
    } catch {
      // A failed invocation returns every message to the queue, as on AWS.
      return { batchItemFailures: records.map((r) => ({ itemIdentifier: r.messageId })) };
    }
  };

  const deliverUntilDone = redeliverUntilDone(ingest);

  /** Runs the aggregate function over the aggregate queue until it is empty with nothing in flight. */
  const drainAggregates = async (options: { batchSize?: number; timeoutMs?: number } = {}) => {
    await drainQueue({
      sqs: admin.sqs,
      queueUrl: aggregateQueueUrl,
      queueArn: copy.queues.aggregate.arn,
      region: LOCAL_REGION,
      invoke: (_, event) => aggregateHandler(event, lambdaContext('aggregate-hours', 30_000)),
      ...options,
    });
  };

  const views = stateViews(admin, tableName, bucketName);

  const sendToAggregateQueue = aggregateQueueSender(admin.sqs, aggregateQueueUrl);

  return {
    env,
    endpoint,
    tableName,
    bucketName,
    aggregateQueueUrl,
    /** The stack copy's outputs (queue URLs, table, bucket), as the CLI reads them. */
    outputs: copy.outputs,
    admin,
    clients,
    faults,
    ports,
    ingestHandler,
    aggregateHandler,
    ingest,
    deliverUntilDone,
    drainAggregates,
    sendToAggregateQueue,
    finalize,
    ...views,
    setClock: (clock: () => number) => {
      now = clock;
    },
  };
};

export type Pipeline = Awaited<ReturnType<typeof createPipeline>>;

/**
 * The pipeline as the CLI sees a stack (its queues too), through the pipeline's own clients, so
 * that its fault injector sees what a command does.
 */
export const cliTarget = (p: Pipeline): Target => ({
  ...p.target,
  clients: p.clients,
  outputs: p.outputs,
  output: (name) => p.outputs[name] ?? '',
});

/** A promise to hold a call on, and the function that lets it through. */
export const gate = () => {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
};

/**
 * The pipeline's clients with an S3 client of their own, whose calls at `site` (matching `when`)
 * wait before they are made until released: a slow reader, next to the pipeline's own.
 */
export const heldS3Clients = (
  p: Pick<Pipeline, 'clients' | 'endpoint'>,
  site: string,
  when?: (input: unknown) => boolean,
) => {
  const { opened, open } = gate();
  const faults = new FaultInjector().add({
    site,
    kind: 'hold',
    release: opened,
    ...(when ? { when } : {}),
  });
  const clients: AwsClients = {
    ...p.clients,
    s3: faults.attach(new S3Client({ ...clientConfig(p.endpoint), forcePathStyle: true })),
  };
  return { clients, reached: faults.nextCall(site), release: open };
};
