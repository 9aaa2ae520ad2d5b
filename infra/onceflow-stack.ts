import { join } from 'node:path';
import {
  CfnOutput,
  Duration,
  RemovalPolicy,
  Stack,
  type StackProps,
  Validations,
} from 'aws-cdk-lib';
import { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { CfnBucket } from 'aws-cdk-lib/aws-s3';
import type { Construct, IConstruct } from 'constructs';
import { PipelineAlarms } from './constructs/alarms.ts';
import { PipelineDashboard } from './constructs/dashboard.ts';
import { DataBucket } from './constructs/data-bucket.ts';
import { HourlyTable } from './constructs/hourly-table.ts';
import { OrderTable } from './constructs/order-table.ts';
import { QueueWithDlq } from './constructs/queue-with-dlq.ts';
import { ScheduledFunction } from './constructs/scheduled-function.ts';
import { SqsFunction } from './constructs/sqs-function.ts';
import type { Settings } from './settings.ts';

const FUNCTIONS_DIR = join(import.meta.dirname, '..', 'functions');
/** Powertools' namespace: the functions emit there, alarms and dashboard read. */
const METRICS_NAMESPACE = 'onceflow';

export interface FunctionTuning {
  /** Default 30 seconds. */
  readonly timeout?: Duration;
  /** Default 10. */
  readonly batchSize?: number;
  /** Default none. */
  readonly maxBatchingWindow?: Duration;
  /** Default 10. */
  readonly maxConcurrency?: number;
}

export interface OnceflowStackProps extends StackProps {
  readonly settings: Settings;
  /** Ingest function tuning; its queue's visibility timeout follows (6 × timeout + window). */
  readonly ingest?: FunctionTuning;
  /** Aggregate function tuning. */
  readonly aggregate?: FunctionTuning;
}

const visibilityFor = (t: FunctionTuning | undefined) =>
  Duration.seconds(
    6 * (t?.timeout ?? Duration.seconds(30)).toSeconds() +
      (t?.maxBatchingWindow ?? Duration.seconds(0)).toSeconds(),
  );

/**
 * The aggregate trigger: 10 messages an invocation (FIFO's maximum), up to 10 at once. With
 * `aggregateWindowSeconds` the queue coalesces instead (FIFO, delayed by the window, one message
 * per hour and window: see `shared/coalesce.ts`); a batching window is not available on FIFO.
 */
const AGGREGATE_TRIGGER: FunctionTuning = { batchSize: 10, maxConcurrency: 10 };

/** The whole pipeline: two queues with DLQs, two functions, one table, one bucket, alarms. */
export class OnceflowStack extends Stack {
  readonly ordersQueue: QueueWithDlq;
  readonly aggregateQueue: QueueWithDlq;
  readonly ingest: SqsFunction;
  readonly aggregate: SqsFunction;
  readonly table: OrderTable;
  readonly data: DataBucket;
  readonly alarms: PipelineAlarms;
  readonly dashboard: PipelineDashboard;
  readonly watchPending: ScheduledFunction;
  readonly finalizeHours: ScheduledFunction;
  readonly hourlyTable: HourlyTable;

  constructor(scope: Construct, id: string, props: OnceflowStackProps) {
    super(scope, id, props);
    const { settings } = props;
    const production = settings.stage !== 'dev';
    const removalPolicy = production ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    this.table = new OrderTable(this, 'Orders', { protect: production });
    this.data = new DataBucket(this, 'Data', {
      retain: production,
      rejectRetentionDays: settings.rejectRetentionDays,
    });
    this.ordersQueue = new QueueWithDlq(this, 'OrdersQueue', {
      visibilityTimeout: visibilityFor(props.ingest),
    });
    const aggregateTuning: FunctionTuning = { ...AGGREGATE_TRIGGER, ...props.aggregate };
    const coalesceSeconds = settings.aggregateWindowSeconds;
    this.aggregateQueue = new QueueWithDlq(this, 'AggregateQueue', {
      visibilityTimeout: visibilityFor(aggregateTuning),
      ...(coalesceSeconds > 0
        ? { fifo: true, deliveryDelay: Duration.seconds(coalesceSeconds) }
        : {}),
    });
    // After a point-in-time restore the functions are pointed at the restored table; the
    // stack's own table is kept as it is (nothing is deleted by switching).
    const table = settings.tableName
      ? TableV2.fromTableName(this, 'RestoredTable', settings.tableName)
      : this.table.table;
    const bucket = this.data.bucket;
    // The service dimension is the stack's name: two stacks in one account (dev and prod) keep
    // their metrics, and so their alarms and dashboards, apart.
    const appMetrics = { namespace: METRICS_NAMESPACE, service: this.stackName };
    const common = {
      TABLE_NAME: table.tableName,
      BUCKET_NAME: bucket.bucketName,
      POWERTOOLS_SERVICE_NAME: appMetrics.service,
      POWERTOOLS_METRICS_NAMESPACE: appMetrics.namespace,
    };

    this.ingest = new SqsFunction(this, 'IngestOrders', {
      entry: join(FUNCTIONS_DIR, 'ingest-orders.ts'),
      source: this.ordersQueue,
      removalPolicy,
      tracing: settings.tracing,
      bundleAwsSdk: settings.awsSdk === 'bundled',
      ...props.ingest,
      environment: {
        ...common,
        AGGREGATE_QUEUE_URL: this.aggregateQueue.queue.queueUrl,
        HOUR_COALESCE_SECONDS: String(coalesceSeconds),
        LATE_POLICY: settings.latePolicy,
        // Whatever the queue accepts, the function applies: no valid body is ever "oversize".
        MAX_BODY_BYTES: String(this.ordersQueue.maxMessageSizeBytes),
        ...(settings.ledgerRetentionDays === undefined
          ? {}
          : { LEDGER_RETENTION_DAYS: String(settings.ledgerRetentionDays) }),
      },
    });
    this.aggregate = new SqsFunction(this, 'AggregateHours', {
      entry: join(FUNCTIONS_DIR, 'aggregate-hours.ts'),
      source: this.aggregateQueue,
      removalPolicy,
      tracing: settings.tracing,
      bundleAwsSdk: settings.awsSdk === 'bundled',
      ...aggregateTuning,
      environment: common,
    });

    this.watchPending = new ScheduledFunction(this, 'WatchPending', {
      entry: join(FUNCTIONS_DIR, 'watch-pending.ts'),
      removalPolicy,
      tracing: settings.tracing,
      bundleAwsSdk: settings.awsSdk === 'bundled',
      environment: {
        TABLE_NAME: table.tableName,
        POWERTOOLS_SERVICE_NAME: appMetrics.service,
        POWERTOOLS_METRICS_NAMESPACE: appMetrics.namespace,
      },
    });

    this.finalizeHours = new ScheduledFunction(this, 'FinalizeHours', {
      entry: join(FUNCTIONS_DIR, 'finalize-hours.ts'),
      every: Duration.minutes(settings.finalizeEveryMinutes),
      // A backlog of hours (the first run over a long history) is worked off in steps.
      timeout: Duration.minutes(2),
      removalPolicy,
      tracing: settings.tracing,
      bundleAwsSdk: settings.awsSdk === 'bundled',
      environment: {
        ...common,
        ALLOWED_LATENESS_MINUTES: String(settings.allowedLatenessMinutes),
        LATE_POLICY: settings.latePolicy,
      },
    });

    // Least privilege: each function gets exactly the calls it makes.
    this.watchPending.fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        // The sparse index of pending batches only, never the table itself.
        actions: ['dynamodb:Query'],
        resources: [`${table.tableArn}/index/${OrderTable.PENDING_INDEX.name}`],
      }),
    );
    this.ingest.fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        // BatchGetItem: a batch's orders before settling them (and, under latePolicy
        // quarantine, the final marks of its hours); GetItem: an order read again after a write
        // of its own, a ledger entry for a conflict report; PutItem: the ledger claim;
        // UpdateItem: order writes and the commit transaction's items.
        actions: [
          'dynamodb:BatchGetItem',
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
        ],
        resources: [table.tableArn],
      }),
    );
    this.ingest.fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['s3:PutObject'],
        resources: [
          bucket.arnForObjects('raw/*'),
          bucket.arnForObjects('arrivals/*'),
          bucket.arnForObjects('rejects/ingest/*'),
        ],
      }),
    );
    // An event conflict's report shows the first content, read from the claiming batch's archive.
    this.ingest.fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['s3:GetObject'],
        resources: [bucket.arnForObjects('raw/*')],
      }),
    );
    // Without ListBucket, GetObject of a missing archive answers 403 instead of 404.
    this.ingest.fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['s3:ListBucket'],
        resources: [bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': ['raw/*'] } },
      }),
    );
    this.aggregateQueue.queue.grantSendMessages(this.ingest.fn);
    this.aggregate.fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        // Query: an hour's counters and final mark; BatchGetItem: a day's marks for its index.
        actions: ['dynamodb:Query', 'dynamodb:BatchGetItem'],
        resources: [table.tableArn],
      }),
    );
    this.finalizeHours.fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        // GetItem: the watermark and the cursor; PutItem: a final mark; UpdateItem: its revision
        // and the cursor; Query: an hour's counters; BatchGetItem: a day's marks.
        actions: [
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
          'dynamodb:Query',
          'dynamodb:BatchGetItem',
        ],
        resources: [table.tableArn],
      }),
    );
    this.finalizeHours.fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        // The batches in progress hold back the hours they may still touch.
        actions: ['dynamodb:Query'],
        resources: [`${table.tableArn}/index/${OrderTable.PENDING_INDEX.name}`],
      }),
    );
    /**
     * Publishing hour objects: read, write and delete them, and list (besides `also`) so a
     * missing hour answers 404, not 403.
     */
    const publishesHours = (fn: IFunction, also: readonly string[] = []) => {
      fn.addToRolePolicy(
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
          resources: [bucket.arnForObjects('aggregates/hourly/*')],
        }),
      );
      fn.addToRolePolicy(
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: ['s3:ListBucket'],
          resources: [bucket.bucketArn],
          conditions: { StringLike: { 's3:prefix': [...also, 'aggregates/hourly/*'] } },
        }),
      );
    };
    // The finalizer also lists the archive: the earliest archived hour is where it first starts.
    publishesHours(this.finalizeHours.fn, ['raw/*']);
    publishesHours(this.aggregate.fn);
    this.aggregate.fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['s3:PutObject'],
        resources: [bucket.arnForObjects('rejects/aggregate/*')],
      }),
    );

    // Athena reads the hour objects where they are: `SELECT … FROM onceflow_hourly WHERE date = …`.
    // (The prefix is shared/keys.ts' AGGREGATE_PREFIX; infra/ imports no code, a test pins it.)
    this.hourlyTable = new HourlyTable(this, 'Hourly', { bucket, prefix: 'aggregates/hourly/' });

    this.alarms = new PipelineAlarms(this, 'Alarms', {
      queues: { orders: this.ordersQueue, aggregate: this.aggregateQueue },
      functions: {
        IngestOrders: this.ingest.fn,
        AggregateHours: this.aggregate.fn,
        WatchPending: this.watchPending.fn,
        FinalizeHours: this.finalizeHours.fn,
      },
      ...(settings.alarmEmail ? { email: settings.alarmEmail } : {}),
      removalPolicy,
      appMetrics,
    });
    this.dashboard = new PipelineDashboard(this, 'Dashboard', {
      queues: { orders: this.ordersQueue, aggregate: this.aggregateQueue },
      functions: { IngestOrders: this.ingest.fn, AggregateHours: this.aggregate.fn },
      tableName: table.tableName,
      appMetrics,
    });

    const outputs: Record<string, string> = {
      OrdersQueueUrl: this.ordersQueue.queue.queueUrl,
      OrdersDlqUrl: this.ordersQueue.dlq.queueUrl,
      AggregateQueueUrl: this.aggregateQueue.queue.queueUrl,
      AggregateDlqUrl: this.aggregateQueue.dlq.queueUrl,
      OrdersQueueArn: this.ordersQueue.queue.queueArn,
      OrdersDlqArn: this.ordersQueue.dlq.queueArn,
      AggregateQueueArn: this.aggregateQueue.queue.queueArn,
      AggregateDlqArn: this.aggregateQueue.dlq.queueArn,
      TableName: table.tableName,
      BucketName: bucket.bucketName,
      IngestFunctionName: this.ingest.fn.functionName,
      AggregateFunctionName: this.aggregate.fn.functionName,
      FinalizeFunctionName: this.finalizeHours.fn.functionName,
      WatchFunctionName: this.watchPending.fn.functionName,
      GlueDatabase: this.hourlyTable.databaseName,
      GlueTable: this.hourlyTable.tableName,
      // What `onceflow replay rejects` checks before sending: too-late parts are refused again
      // while the deployed functions quarantine them.
      LatePolicy: settings.latePolicy,
      // The `service` dimension of the functions' metrics, which `onceflow status` reads.
      MetricsService: appMetrics.service,
    };
    for (const [name, value] of Object.entries(outputs)) new CfnOutput(this, name, { value });

    this.#suppressReasonedFindings(settings);
  }

  #suppressReasonedFindings(settings: Settings) {
    const ack = (scope: IConstruct, id: string, reason: string) =>
      Validations.of(scope).acknowledge({ id, reason });
    // Full rule ids (`Pack::Rule`), so each acknowledgement shows in the validation report.
    ack(
      this.data.bucket,
      'AwsSolutions::AwsSolutions-S1',
      'No server access logs: only the stack’s functions write to the bucket, and each write is in their logs. ' +
        'To audit reads, enable CloudTrail S3 data events for this bucket in the account’s trail; this stack does not create one.',
    );
    // Object-level S3 permissions need a key pattern; each is scoped to a fixed prefix.
    const bucketId = this.resolve(
      (this.data.bucket.node.defaultChild as CfnBucket).logicalId,
    ) as string;
    const prefixes: [IConstruct, string[]][] = [
      [this.ingest, ['raw/*', 'arrivals/*', 'rejects/ingest/*']],
      [this.aggregate, ['aggregates/hourly/*', 'rejects/aggregate/*']],
      [this.finalizeHours, ['aggregates/hourly/*']],
    ];
    for (const [fn, keys] of prefixes) {
      for (const key of keys) {
        ack(
          fn,
          `AwsSolutions::AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${key}]`,
          `Objects under the fixed prefix ${key} only; no wildcard actions.`,
        );
      }
    }
    const functions = [this.ingest, this.aggregate, this.watchPending, this.finalizeHours];
    for (const fn of functions) {
      ack(
        fn,
        'AwsSolutions::AwsSolutions-L1',
        'nodejs24.x on purpose: the project pins Node 24, so the local runtime, the tests and the bench run the major the functions deploy on. ' +
          'Node 24 has long-term support until April 2028; moving to nodejs26.x moves that pin with it.',
      );
    }
    if (settings.tracing) {
      for (const fn of functions) {
        ack(
          fn,
          'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
          'Active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions, so AWS requires the resource "*".',
        );
      }
    }
  }
}
