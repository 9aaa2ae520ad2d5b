import { describe, expect, it } from 'vitest';
import {
  loadAggregateConfig,
  loadFinalizeConfig,
  loadIngestConfig,
  loadTracingConfig,
  loadWatchConfig,
} from '../../shared/config.ts';
import { ConfigError } from '../../shared/errors.ts';

const env = { TABLE_NAME: 't', BUCKET_NAME: 'b', AGGREGATE_QUEUE_URL: 'http://q' };

describe('configuration', () => {
  it('fills documented defaults', () => {
    expect(loadIngestConfig(env)).toEqual({
      aws: { region: undefined, endpoint: undefined, s3ForcePathStyle: false },
      tableName: 't',
      bucketName: 'b',
      aggregateQueueUrl: 'http://q',
      counterShards: 4,
      maxBodyBytes: 1024 * 1024,
      ledgerRetentionSeconds: undefined,
      writeConcurrency: 16,
      hourCoalesceSeconds: 0,
      latePolicy: 'amend',
    });
  });

  it('fills the finalizer’s and the watcher’s documented defaults', () => {
    const aws = { region: 'eu-west-1', endpoint: undefined, s3ForcePathStyle: false };
    expect(
      loadFinalizeConfig({ TABLE_NAME: 't', BUCKET_NAME: 'b', AWS_REGION: 'eu-west-1' }),
    ).toEqual({
      aws,
      tableName: 't',
      bucketName: 'b',
      allowedLatenessMinutes: 120,
      maxHoursPerRun: 168,
      latePolicy: 'amend',
    });
    expect(loadWatchConfig({ TABLE_NAME: 't', AWS_REGION: 'eu-west-1' })).toEqual({
      aws,
      tableName: 't',
    });
  });

  it('fails naming every missing variable', () => {
    expect(() => loadIngestConfig({ TABLE_NAME: 't' })).toThrow(ConfigError);
    expect(() => loadIngestConfig({ TABLE_NAME: 't' })).toThrow(
      /BUCKET_NAME: is required; AGGREGATE_QUEUE_URL: is required/,
    );
    expect(() => loadAggregateConfig({})).toThrow(/TABLE_NAME: is required/);
    // Set but empty, as a template with an unresolved value may leave it: still missing.
    expect(() => loadAggregateConfig({ TABLE_NAME: '', BUCKET_NAME: 'b' })).toThrow(
      /TABLE_NAME: is required/,
    );
    expect(() => loadWatchConfig({})).toThrow(/TABLE_NAME: is required/);
  });

  it('fails naming a malformed variable', () => {
    expect(() => loadIngestConfig({ ...env, COUNTER_SHARDS: '0' })).toThrow(
      /COUNTER_SHARDS: must be at least 1/,
    );
    expect(() => loadIngestConfig({ ...env, LEDGER_RETENTION_DAYS: 'ten' })).toThrow(
      /LEDGER_RETENTION_DAYS: must be a whole number/,
    );
    expect(() => loadIngestConfig({ ...env, S3_FORCE_PATH_STYLE: 'yes' })).toThrow(
      /S3_FORCE_PATH_STYLE/,
    );
    expect(() => loadIngestConfig({ ...env, AWS_ENDPOINT_URL: 'localhost' })).toThrow(
      /AWS_ENDPOINT_URL: must be a URL/,
    );
    expect(() => loadIngestConfig({ ...env, LATE_POLICY: 'drop' })).toThrow(
      /LATE_POLICY: must be amend or quarantine/,
    );
  });

  it('traces only when POWERTOOLS_TRACE_ENABLED is true, and refuses any other value', () => {
    expect(loadTracingConfig({})).toEqual({ enabled: false });
    expect(loadTracingConfig({ POWERTOOLS_TRACE_ENABLED: 'false' })).toEqual({ enabled: false });
    expect(loadTracingConfig({ POWERTOOLS_TRACE_ENABLED: 'true' })).toEqual({ enabled: true });
    expect(() => loadTracingConfig({ POWERTOOLS_TRACE_ENABLED: 'yes' })).toThrow(
      /POWERTOOLS_TRACE_ENABLED: must be true or false/,
    );
  });

  it('reads the ledger retention in days', () => {
    expect(loadIngestConfig({ ...env, LEDGER_RETENTION_DAYS: '30' }).ledgerRetentionSeconds).toBe(
      30 * 86_400,
    );
  });
});
