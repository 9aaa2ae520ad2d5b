/**
 * Settings come from the environment once, at cold start, into a typed object. A missing or
 * malformed variable fails the start with its name.
 */
import * as v from 'valibot';
import { ConfigError } from './errors.ts';
import { describeValidationIssues } from './schema.ts';

type Env = Readonly<Record<string, string | undefined>>;

const required = v.pipe(v.string('is required'), v.minLength(1, 'is required'));
/** Order writes in flight for one batch when `WRITE_CONCURRENCY` is not set. */
export const DEFAULT_WRITE_CONCURRENCY = 16;

const integer = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, 'must be a whole number'),
    v.transform(Number),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );
const flag = v.pipe(
  v.picklist(['true', 'false'], 'must be true or false'),
  v.transform((s) => s === 'true'),
);

/** What happens to events of an hour already closed or final (shared/ingest.ts, LatePolicy). */
const latePolicy = v.picklist(['amend', 'quarantine'], 'must be amend or quarantine');

const AwsSchema = v.object({
  AWS_REGION: v.optional(required),
  /** Set for LocalStack or the local runtime; absent on AWS. */
  AWS_ENDPOINT_URL: v.optional(v.pipe(v.string(), v.url('must be a URL'))),
  S3_FORCE_PATH_STYLE: v.optional(flag, 'false'),
});

const IngestSchema = v.object({
  ...AwsSchema.entries,
  TABLE_NAME: required,
  BUCKET_NAME: required,
  AGGREGATE_QUEUE_URL: required,
  COUNTER_SHARDS: v.optional(integer(1, 100), '4'),
  MAX_BODY_BYTES: v.optional(integer(1024, 10 * 1024 * 1024), String(1024 * 1024)),
  LEDGER_RETENTION_DAYS: v.optional(integer(1, 36_500)),
  WRITE_CONCURRENCY: v.optional(integer(1, 64), String(DEFAULT_WRITE_CONCURRENCY)),
  /** The aggregate queue's coalescing window (it is FIFO when set); 0: a standard queue. */
  HOUR_COALESCE_SECONDS: v.optional(integer(0, 900), '0'),
  LATE_POLICY: v.optional(latePolicy, 'amend'),
});

const AggregateSchema = v.object({
  ...AwsSchema.entries,
  TABLE_NAME: required,
  BUCKET_NAME: required,
});

const FinalizeSchema = v.object({
  ...AwsSchema.entries,
  TABLE_NAME: required,
  BUCKET_NAME: required,
  /** How far behind the latest applied event time the watermark stays (0–10,080 minutes). */
  ALLOWED_LATENESS_MINUTES: v.optional(integer(0, 10_080), '120'),
  /** Hours finalized per run at most; a backlog takes several runs. */
  MAX_HOURS_PER_RUN: v.optional(integer(1, 10_000), '168'),
  LATE_POLICY: v.optional(latePolicy, 'amend'),
});

const TracingSchema = v.object({
  /**
   * Powertools' own switch, set to `true` by the stack on functions deployed with tracing
   * (`-c tracing=true`). Absent means off here (Powertools would default to on).
   */
  POWERTOOLS_TRACE_ENABLED: v.optional(flag, 'false'),
});

const WatchSchema = v.object({
  ...AwsSchema.entries,
  TABLE_NAME: required,
});

export interface AwsConfig {
  readonly region: string | undefined;
  readonly endpoint: string | undefined;
  readonly s3ForcePathStyle: boolean;
}

export interface IngestConfig {
  readonly aws: AwsConfig;
  readonly tableName: string;
  readonly bucketName: string;
  readonly aggregateQueueUrl: string;
  readonly counterShards: number;
  readonly maxBodyBytes: number;
  readonly ledgerRetentionSeconds: number | undefined;
  readonly writeConcurrency: number;
  readonly hourCoalesceSeconds: number;
  readonly latePolicy: 'amend' | 'quarantine';
}

export interface AggregateConfig {
  readonly aws: AwsConfig;
  readonly tableName: string;
  readonly bucketName: string;
}

export interface FinalizeConfig {
  readonly aws: AwsConfig;
  readonly tableName: string;
  readonly bucketName: string;
  readonly allowedLatenessMinutes: number;
  readonly maxHoursPerRun: number;
  readonly latePolicy: 'amend' | 'quarantine';
}

export interface WatchConfig {
  readonly aws: AwsConfig;
  readonly tableName: string;
}

const parse = <S extends v.GenericSchema<unknown, unknown>>(
  schema: S,
  env: Env,
): v.InferOutput<S> => {
  const result = v.safeParse(schema, env);
  if (!result.success)
    throw new ConfigError(`invalid configuration: ${describeValidationIssues(result.issues)}`);
  return result.output;
};

const awsOf = (env: v.InferOutput<typeof AwsSchema>): AwsConfig => ({
  region: env.AWS_REGION,
  endpoint: env.AWS_ENDPOINT_URL,
  s3ForcePathStyle: env.S3_FORCE_PATH_STYLE,
});

export const loadIngestConfig = (env: Env): IngestConfig => {
  const e = parse(IngestSchema, env);
  return {
    aws: awsOf(e),
    tableName: e.TABLE_NAME,
    bucketName: e.BUCKET_NAME,
    aggregateQueueUrl: e.AGGREGATE_QUEUE_URL,
    counterShards: e.COUNTER_SHARDS,
    maxBodyBytes: e.MAX_BODY_BYTES,
    ledgerRetentionSeconds:
      e.LEDGER_RETENTION_DAYS === undefined ? undefined : e.LEDGER_RETENTION_DAYS * 86_400,
    writeConcurrency: e.WRITE_CONCURRENCY,
    hourCoalesceSeconds: e.HOUR_COALESCE_SECONDS,
    latePolicy: e.LATE_POLICY,
  };
};

export const loadAggregateConfig = (env: Env): AggregateConfig => {
  const e = parse(AggregateSchema, env);
  return { aws: awsOf(e), tableName: e.TABLE_NAME, bucketName: e.BUCKET_NAME };
};

export const loadFinalizeConfig = (env: Env): FinalizeConfig => {
  const e = parse(FinalizeSchema, env);
  return {
    aws: awsOf(e),
    tableName: e.TABLE_NAME,
    bucketName: e.BUCKET_NAME,
    allowedLatenessMinutes: e.ALLOWED_LATENESS_MINUTES,
    maxHoursPerRun: e.MAX_HOURS_PER_RUN,
    latePolicy: e.LATE_POLICY,
  };
};

export const loadWatchConfig = (env: Env): WatchConfig => {
  const e = parse(WatchSchema, env);
  return { aws: awsOf(e), tableName: e.TABLE_NAME };
};

/** Whether the function traces (read before anything else: it decides what loads at init). */
export const loadTracingConfig = (env: Env): { readonly enabled: boolean } => ({
  enabled: parse(TracingSchema, env).POWERTOOLS_TRACE_ENABLED,
});
