/** Builds each function's ports from its configuration and the shared clients. */
import type { AggregatorPorts } from '../shared/aggregator.ts';
import type { AggregateConfig, IngestConfig } from '../shared/config.ts';
import type { IngestPorts, IngestSettings } from '../shared/ingest.ts';
import type { AwsClients } from './clients.ts';
import { DynamoCounterReader, DynamoLedger } from './dynamo.ts';
import { DynamoOrderStore } from './dynamo-orders.ts';
import { S3Store } from './s3.ts';
import { SqsHourNotifier } from './sqs.ts';

export const ingestPorts = (config: IngestConfig, clients: AwsClients): IngestPorts => {
  const s3 = new S3Store(clients.s3, config.bucketName);
  return {
    ledger: new DynamoLedger(clients.dynamo, config.tableName),
    orders: new DynamoOrderStore(clients.dynamo, config.tableName),
    archive: s3,
    quarantine: s3,
    notifier: new SqsHourNotifier(clients.sqs, config.aggregateQueueUrl, {
      coalesceSeconds: config.hourCoalesceSeconds,
    }),
    now: Date.now,
  };
};

export const ingestSettings = (config: IngestConfig): IngestSettings => ({
  counterShards: config.counterShards,
  maxBodyBytes: config.maxBodyBytes,
  writeConcurrency: config.writeConcurrency,
  ...(config.ledgerRetentionSeconds === undefined
    ? {}
    : { ledgerRetentionSeconds: config.ledgerRetentionSeconds }),
});

export const aggregatorPorts = (
  config: AggregateConfig,
  clients: Pick<AwsClients, 'dynamo' | 's3'>,
): AggregatorPorts => ({
  counters: new DynamoCounterReader(clients.dynamo, config.tableName),
  objects: new S3Store(clients.s3, config.bucketName),
  now: Date.now,
});
