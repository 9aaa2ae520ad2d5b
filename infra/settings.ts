/**
 * Stage and settings from CDK context (`-c stage=prod -c alarmEmail=…`), typed and validated in
 * one place. Every default is documented here.
 */
import * as v from 'valibot';

const positive = (max: number) =>
  v.pipe(
    v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number))]),
    v.integer(),
    v.minValue(1),
    v.maxValue(max),
  );

const SettingsSchema = v.object({
  /** Deployment stage; anything but `dev` keeps data on delete and protects the table. Default `dev`. */
  stage: v.optional(
    v.pipe(v.string(), v.regex(/^[a-z][a-z0-9-]{0,19}$/, 'stage must be lower-case, 1-20 chars')),
    'dev',
  ),
  /** Email address subscribed to the alarm topic; no topic when absent. */
  alarmEmail: v.optional(v.pipe(v.string(), v.email())),
  /** Ledger retention in days; absent keeps ledger entries forever (the default). */
  ledgerRetentionDays: v.optional(positive(36_500)),
  /** Days before quarantined messages under rejects/ expire. Default 90. */
  rejectRetentionDays: v.optional(positive(3650), 90),
  /**
   * An existing table for the functions to use instead of the stack's own: the table a
   * point-in-time restore created (see the README's runbook). The stack's own table stays, and
   * is used again once this is removed. Default: the stack's own table.
   */
  /**
   * Active X-Ray tracing on every function, through the Powertools Tracer (the handler and each
   * AWS SDK call as subsegments). Off by default: the tracer is then left out of the bundles.
   */
  tracing: v.optional(
    v.union([
      v.boolean(),
      v.pipe(
        v.picklist(['true', 'false'], 'tracing must be true or false'),
        v.transform((s) => s === 'true'),
      ),
    ]),
    false,
  ),
  /**
   * Where the functions get the AWS SDK: `bundled` (minified and tree-shaken into each bundle
   * from the SDK's ES module entry points) or `external` (the copy the Lambda runtime provides).
   * Default `bundled`: its cold start is the shorter one (`npm run bench` measures both).
   */
  awsSdk: v.optional(
    v.picklist(['bundled', 'external'], 'awsSdk must be bundled or external'),
    'bundled',
  ),
  /**
   * The window over which hour notifications coalesce (0–60 s): an hour object is published at
   * most once per window, however many batches touch it, and an event waits at most about one
   * window more to show. With a window the aggregate queue is FIFO, grouped by hour, delayed by
   * the window and deduplicated per hour and window (`shared/coalesce.ts`); 0 keeps a standard
   * queue and publishes on every notification. Default 2.
   */
  aggregateWindowSeconds: v.optional(
    v.pipe(
      v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number))]),
      v.integer(),
      v.minValue(0),
      v.maxValue(60, 'aggregateWindowSeconds must be at most 60'),
    ),
    2,
  ),
  /**
   * How far behind the latest applied event time the watermark stays (0–10,080 minutes): an
   * hour becomes final once the watermark passes its end and no batch in progress can touch it.
   * Default 120.
   */
  allowedLatenessMinutes: v.optional(
    v.pipe(
      v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number))]),
      v.integer(),
      v.minValue(0),
      v.maxValue(10_080, 'allowedLatenessMinutes must be at most 10080 (a week)'),
    ),
    120,
  ),
  /**
   * What happens to an event whose hour is already closed or final: `amend` (default) applies it
   * and republishes the hour with its amendments count raised; `quarantine` refuses the batch's
   * events of that hour (reason `too-late`) and applies the rest. Quarantine costs each batch one
   * strongly consistent read per hour it touches and one ledger write, and makes an hour final
   * one finalizer run after it closes.
   */
  latePolicy: v.optional(
    v.picklist(['amend', 'quarantine'], 'latePolicy must be amend or quarantine'),
    'amend',
  ),
  /** How often the finalizer runs (1–60 minutes). Default 5. */
  finalizeEveryMinutes: v.optional(
    v.pipe(
      v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number))]),
      v.integer(),
      v.minValue(1, 'finalizeEveryMinutes must be at least 1'),
      v.maxValue(60, 'finalizeEveryMinutes must be at most 60'),
    ),
    5,
  ),
  tableName: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[A-Za-z0-9_.-]{3,255}$/, 'tableName must be a DynamoDB table name'),
    ),
  ),
});

export type Settings = v.InferOutput<typeof SettingsSchema>;

/** Reads the settings from a construct node's context; throws naming each bad key. */
export const readSettings = (context: (key: string) => unknown): Settings => {
  const raw = Object.fromEntries(
    Object.keys(SettingsSchema.entries)
      .map((key) => [key, context(key)])
      .filter(([, value]) => value !== undefined),
  );
  const result = v.safeParse(SettingsSchema, raw);
  if (!result.success) {
    throw new Error(
      `invalid context: ${result.issues.map((i) => `${v.getDotPath(i)}: ${i.message}`).join('; ')}`,
    );
  }
  return result.output;
};
