/** Builds each function's ports from its configuration and the shared clients. */
import type { AggregatorPorts } from '../shared/aggregator.ts';
import type { AggregateConfig, FinalizeConfig, IngestConfig } from '../shared/config.ts';
import type { DayIndexPorts } from '../shared/day-index.ts';
import {
  type FinalizerPorts,
  type FinalizerSettings,
  QUARANTINE_CLOSE_GRACE_MS,
} from '../shared/finalizer.ts';
import type { IngestPorts, IngestSettings } from '../shared/ingest.ts';
import { hourOfArchiveKey } from '../shared/keys.ts';
import type { AwsClients } from './clients.ts';
import { DynamoLedger } from './dynamo.ts';
import { DynamoCounterReader } from './dynamo-counters.ts';
import { DynamoEventClock, DynamoFinalMarks } from './dynamo-hours.ts';
import { DynamoOrderStore } from './dynamo-orders.ts';
import { S3Store } from './s3.ts';
import { SqsHourNotifier } from './sqs.ts';

export const ingestPorts = (config: IngestConfig, clients: AwsClients): IngestPorts => {
  const s3 = new S3Store(clients.s3, config.bucketName);
  return {
    ledger: new DynamoLedger(clients.dynamo, config.tableName),
    clock: new DynamoEventClock(clients.dynamo, config.tableName),
    orders: new DynamoOrderStore(clients.dynamo, config.tableName),
    archive: s3,
    quarantine: s3,
    notifier: new SqsHourNotifier(clients.sqs, config.aggregateQueueUrl, {
      coalesceSeconds: config.hourCoalesceSeconds,
    }),
    marks: new DynamoFinalMarks(clients.dynamo, config.tableName),
    now: Date.now,
  };
};

export const ingestSettings = (config: IngestConfig): IngestSettings => ({
  counterShards: config.counterShards,
  maxBodyBytes: config.maxBodyBytes,
  writeConcurrency: config.writeConcurrency,
  latePolicy: config.latePolicy,
  ...(config.ledgerRetentionSeconds === undefined
    ? {}
    : { ledgerRetentionSeconds: config.ledgerRetentionSeconds }),
});

export const aggregatorPorts = (
  config: Pick<AggregateConfig, 'tableName' | 'bucketName'>,
  clients: Pick<AwsClients, 'dynamo' | 's3'>,
): AggregatorPorts => ({
  counters: new DynamoCounterReader(clients.dynamo, config.tableName),
  objects: new S3Store(clients.s3, config.bucketName),
  now: Date.now,
});

/** What publishing a day's index reads and writes: the final marks and the objects. */
export const dayIndexPorts = (
  config: Pick<AggregateConfig, 'tableName' | 'bucketName'>,
  clients: Pick<AwsClients, 'dynamo' | 's3'>,
): DayIndexPorts => ({
  marks: new DynamoFinalMarks(clients.dynamo, config.tableName),
  objects: new S3Store(clients.s3, config.bucketName),
  now: Date.now,
});

/** Everything the aggregate function uses, from its configuration and clients. */
export const aggregateDependencies = (
  config: Pick<AggregateConfig, 'tableName' | 'bucketName'>,
  clients: Pick<AwsClients, 'dynamo' | 's3'>,
) => ({
  ports: aggregatorPorts(config, clients),
  quarantine: new S3Store(clients.s3, config.bucketName),
  index: dayIndexPorts(config, clients),
});

export const finalizerPorts = (
  config: FinalizeConfig,
  clients: Pick<AwsClients, 'dynamo' | 's3'>,
): FinalizerPorts => {
  const ledger = new DynamoLedger(clients.dynamo, config.tableName);
  const s3 = new S3Store(clients.s3, config.bucketName);
  return {
    clock: new DynamoEventClock(clients.dynamo, config.tableName),
    marks: new DynamoFinalMarks(clients.dynamo, config.tableName),
    earliestPendingHour: async () =>
      (await ledger.pendingBatches())
        .flatMap((b) => hourOfArchiveKey(b.archiveKey) ?? [])
        .sort()[0],
    earliestArchivedHour: () => s3.earliestArchivedHour(),
    aggregator: aggregatorPorts(config, clients),
    index: dayIndexPorts(config, clients),
    now: Date.now,
  };
};

export const finalizerSettings = (config: FinalizeConfig): FinalizerSettings => ({
  allowedLatenessMinutes: config.allowedLatenessMinutes,
  maxHoursPerRun: config.maxHoursPerRun,
  closeGraceMs: config.latePolicy === 'quarantine' ? QUARANTINE_CLOSE_GRACE_MS : 0,
});
