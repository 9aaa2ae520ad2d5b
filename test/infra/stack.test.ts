import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { CfnGlobalTable } from 'aws-cdk-lib/aws-dynamodb';
import { BUNDLING_STACKS } from 'aws-cdk-lib/cx-api';
import { AwsSolutionsChecks } from 'cdk-nag';
import * as v from 'valibot';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CUSTOMER_ATTRIBUTE,
  CUSTOMER_INDEX,
  CUSTOMER_SORT_ATTRIBUTE,
  PENDING_ATTRIBUTE,
  PENDING_INDEX,
  PENDING_SORT_ATTRIBUTE,
  TABLE_KEY,
  TTL_ATTRIBUTE,
} from '../../adapters/dynamo-items.ts';
import { QueueWithDlq } from '../../infra/constructs/queue-with-dlq.ts';
import type { ScheduledFunction } from '../../infra/constructs/scheduled-function.ts';
import { SqsFunction } from '../../infra/constructs/sqs-function.ts';
import { OnceflowStack, type OnceflowStackProps } from '../../infra/onceflow-stack.ts';
import { readSettings } from '../../infra/settings.ts';
import { AGGREGATE_PREFIX, hourObjectKey } from '../../shared/keys.ts';
import { parseJson } from '../support/json.ts';

/** The project's `cdk.json` context: the feature flags `cdk synth` runs the app with. */
const CDK_JSON_CONTEXT = parseJson(
  v.object({ context: v.record(v.string(), v.unknown()) }),
  readFileSync(join(import.meta.dirname, '..', '..', 'cdk.json'), 'utf8'),
).context;

/**
 * The stack synthesized as `cdk synth` would: with `cdk.json`'s context, cdk-nag and CDK's
 * CloudFormation validation. The functions' code is bundled only when a test reads it: the
 * template is the same either way (but for the assets' hashes), and bundling takes most of a
 * synthesis.
 */
const synth = (
  context: Record<string, unknown> = {},
  extra: Partial<OnceflowStackProps> = {},
  { bundle = false }: { readonly bundle?: boolean } = {},
) => {
  const app = new App({
    outdir: mkdtempSync(join(tmpdir(), 'onceflow-cdk-')),
    context: { ...CDK_JSON_CONTEXT, ...context, ...(bundle ? {} : { [BUNDLING_STACKS]: [] }) },
  });
  const stack = new OnceflowStack(app, 'test', {
    settings: readSettings((k) => app.node.tryGetContext(k)),
    ...extra,
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  const assembly = app.synth();
  return { stack, template: Template.fromStack(stack), assembly };
};

type Resources = Record<
  string,
  { Type: string; Properties: Record<string, unknown>; DependsOn?: string[] }
>;

/** The validation report in an assembly (cdk-nag's and CDK's own): the fields these tests read. */
const readValidationReport = (assemblyDir: string) =>
  parseJson(
    v.object({
      pluginReports: v.array(
        v.object({
          pluginName: v.string(),
          conclusion: v.string(),
          violations: v.array(v.unknown()),
          suppressedViolations: v.array(v.object({ ruleName: v.string(), reason: v.string() })),
        }),
      ),
    }),
    readFileSync(join(assemblyDir, 'validation-report.json'), 'utf8'),
  );

describe('the onceflow stack', () => {
  let template: Template;
  let resources: Resources;
  let stack: OnceflowStack;
  let outdir: string;

  beforeAll(() => {
    const dev = synth();
    template = dev.template;
    stack = dev.stack;
    outdir = dev.assembly.directory;
    resources = template.toJSON().Resources as Resources;
  });

  const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
    stack.resolve((construct.node.defaultChild as { logicalId: string }).logicalId) as string;

  /**
   * EventBridge invokes Lambda asynchronously: its retry policy covers the delivery, and Lambda
   * retries a function error itself (twice by default) unless the function says otherwise.
   */
  const expectNoAsyncRetries = (scheduled: ScheduledFunction, maxAgeSeconds: number) =>
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: logicalId(scheduled.fn) },
      Qualifier: '$LATEST',
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: maxAgeSeconds,
    });

  it('runs every function on Node.js 24, ARM64, with their own log groups and no source-map flag', () => {
    template.resourcePropertiesCountIs(
      'AWS::Lambda::Function',
      { Runtime: 'nodejs24.x', Architectures: ['arm64'] },
      4,
    );
    template.resourcePropertiesCountIs(
      'AWS::Lambda::Function',
      {
        Environment: {
          Variables: Match.objectLike({
            // The stack's name: two stacks in one account keep their metrics apart.
            POWERTOOLS_SERVICE_NAME: 'test',
            // The bundles map their stack traces themselves, when first formatted.
            NODE_OPTIONS: Match.absent(),
          }),
        },
        LoggingConfig: { LogGroup: Match.anyValue() },
      },
      4,
    );
    template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
  });

  it('runs the pending watcher every 5 minutes from an EventBridge rule, without retries', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      State: 'ENABLED',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [logicalId(stack.watchPending.fn), 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 0 },
        }),
      ],
    });
    expectNoAsyncRetries(stack.watchPending, 300);
  });

  it('runs the finalizer every 5 minutes from an EventBridge rule, without retries, with the allowed lateness', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      State: 'ENABLED',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [logicalId(stack.finalizeHours.fn), 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 0 },
        }),
      ],
    });
    expectNoAsyncRetries(stack.finalizeHours, 300);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Timeout: 120,
      Environment: { Variables: Match.objectLike({ ALLOWED_LATENESS_MINUTES: '120' }) },
    });
    const tuned = synth({ allowedLatenessMinutes: '30', finalizeEveryMinutes: '15' });
    tuned.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(15 minutes)',
    });
    tuned.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 900,
    });
    tuned.template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ ALLOWED_LATENESS_MINUTES: '30' }) },
    });
    expect(() => readSettings((k) => ({ finalizeEveryMinutes: '0' })[k])).toThrow(
      /finalizeEveryMinutes must be at least 1/,
    );
  });

  it('gives the late policy to the ingest function and the finalizer, with the same DynamoDB actions under either', () => {
    const policyOf = (t: Template) =>
      Object.values(t.findResources('AWS::Lambda::Function'))
        .map((r) => r.Properties?.Environment?.Variables?.LATE_POLICY)
        .filter((p) => p !== undefined);
    // Ingest and finalizer, default amend.
    expect(policyOf(template)).toEqual(['amend', 'amend']);
    const strict = synth({ latePolicy: 'quarantine' });
    expect(policyOf(strict.template)).toEqual(['quarantine', 'quarantine']);
    const ingestActions = (t: Template, fn: SqsFunction) =>
      Object.values(t.findResources('AWS::IAM::Policy'))
        .filter((r) =>
          JSON.stringify(r.Properties.Roles).includes(
            logicalId(fn.fn.role as unknown as { node: { defaultChild?: unknown } }),
          ),
        )
        .flatMap((r) => r.Properties.PolicyDocument.Statement)
        .flatMap((st: { Action: string | string[] }) => [st.Action].flat())
        .filter((a: string) => a.startsWith('dynamodb:'))
        .sort();
    // BatchGetItem reads a batch's orders, and under quarantine the final marks of its hours too.
    const actions = [
      'dynamodb:BatchGetItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ];
    expect(ingestActions(template, stack.ingest)).toEqual(actions);
    expect(ingestActions(strict.template, strict.stack.ingest)).toEqual(actions);
    expect(() => readSettings((k) => ({ latePolicy: 'drop' })[k])).toThrow(
      /latePolicy must be amend or quarantine/,
    );
  });

  it('describes the hour objects to Athena: a Glue table over aggregates/hourly/ with date partition projection', () => {
    template.hasResourceProperties('AWS::Glue::Database', { DatabaseInput: { Name: 'test' } });
    template.hasResourceProperties('AWS::Glue::Table', {
      DatabaseName: 'test',
      TableInput: Match.objectLike({
        Name: 'onceflow_hourly',
        TableType: 'EXTERNAL_TABLE',
        PartitionKeys: [{ Name: 'date', Type: 'string' }],
        Parameters: Match.objectLike({
          classification: 'json',
          'projection.enabled': 'true',
          'projection.date.type': 'date',
          'projection.date.format': 'yyyy-MM-dd',
          'projection.date.range': '2020-01-01,NOW',
          'projection.date.interval': '1',
          'projection.date.interval.unit': 'DAYS',
        }),
        StorageDescriptor: Match.objectLike({
          InputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
          SerdeInfo: {
            SerializationLibrary: 'org.openx.data.jsonserde.JsonSerDe',
            Parameters: { 'case.insensitive': 'TRUE' },
          },
        }),
      }),
    });
    // The location and the path template follow the hour objects' keys (shared/keys.ts).
    const table = Object.values(resources).find((r) => r.Type === 'AWS::Glue::Table');
    const input = JSON.stringify(table?.Properties.TableInput);
    expect(input).toContain(`"/${AGGREGATE_PREFIX}date=\${date}/"`);
    expect(hourObjectKey('2026-10-01T09:00:00Z')).toBe(
      `${AGGREGATE_PREFIX}date=2026-10-01/hour=09.json`,
    );
    expect(input).not.toContain('_final');
    // The table is created after its database, which CloudFormation cannot infer from a name.
    const database = Object.entries(resources).find(([, r]) => r.Type === 'AWS::Glue::Database');
    expect(table?.DependsOn).toContain(database?.[0]);
  });

  it('turns on partial batch responses for both event source mappings, 10 messages an invocation, up to 10 at once', () => {
    template.resourcePropertiesCountIs(
      'AWS::Lambda::EventSourceMapping',
      {
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        BatchSize: 10,
        MaximumBatchingWindowInSeconds: Match.absent(),
        ScalingConfig: { MaximumConcurrency: 10 },
      },
      2,
    );
  });

  it('coalesces hour notifications on a FIFO aggregate queue delayed by the 2 second window', () => {
    const queue = resources[logicalId(stack.aggregateQueue.queue)]?.Properties ?? {};
    const dlq = resources[logicalId(stack.aggregateQueue.dlq)]?.Properties ?? {};
    expect(queue).toMatchObject({
      FifoQueue: true,
      DelaySeconds: 2,
      DeduplicationScope: 'messageGroup',
      FifoThroughputLimit: 'perMessageGroupId',
    });
    // Deduplication is by the id the notifier computes: never by content.
    expect(queue.ContentBasedDeduplication).toBeUndefined();
    expect(dlq.FifoQueue).toBe(true);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ HOUR_COALESCE_SECONDS: '2' }) },
    });
    const orders = resources[logicalId(stack.ordersQueue.queue)]?.Properties ?? {};
    expect(orders.FifoQueue).toBeUndefined();

    const unwindowed = synth({ aggregateWindowSeconds: '0' });
    const plain = Object.values(unwindowed.template.toJSON().Resources ?? {}) as {
      Type: string;
      Properties?: Record<string, unknown>;
    }[];
    expect(plain.filter((r) => r.Type === 'AWS::SQS::Queue' && r.Properties?.FifoQueue)).toEqual(
      [],
    );
    unwindowed.template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ HOUR_COALESCE_SECONDS: '0' }) },
    });
    expect(() => readSettings((k) => ({ aggregateWindowSeconds: '61' })[k])).toThrow(
      /aggregateWindowSeconds must be at most 60/,
    );
  });

  it('lets the ingest function apply every body its queue accepts (1 MiB)', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ MAX_BODY_BYTES: '1048576' }) },
    });
  });

  it('sends each queue to its DLQ after 5 receives, with a DLQ that outlives its source', () => {
    for (const q of [stack.ordersQueue, stack.aggregateQueue]) {
      const source = resources[logicalId(q.queue)]?.Properties ?? {};
      const dlq = resources[logicalId(q.dlq)]?.Properties ?? {};
      expect(source.RedrivePolicy).toEqual({
        deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(q.dlq), 'Arn'] },
        maxReceiveCount: 5,
      });
      expect(dlq.MessageRetentionPeriod).toBe(14 * 86_400);
      expect(Number(dlq.MessageRetentionPeriod)).toBeGreaterThan(
        Number(source.MessageRetentionPeriod),
      );
      expect(source.SqsManagedSseEnabled).toBe(true);
      expect(dlq.SqsManagedSseEnabled).toBe(true);
      // A redriven message must fit back into its source queue.
      expect(source.MaximumMessageSize).toBe(1_048_576);
      expect(dlq.MaximumMessageSize).toBe(1_048_576);
    }
  });

  it('keeps every queue’s visibility timeout at least 6 × its function timeout + batching window', () => {
    const functions = Object.entries(resources).filter(
      ([, r]) => r.Type === 'AWS::Lambda::Function',
    );
    const mappings = Object.values(resources).filter(
      (r) => r.Type === 'AWS::Lambda::EventSourceMapping',
    );
    expect(mappings).toHaveLength(2);
    for (const mapping of mappings) {
      const fnId = (mapping.Properties.FunctionName as { Ref: string }).Ref;
      const queueId = (mapping.Properties.EventSourceArn as { 'Fn::GetAtt': [string, string] })[
        'Fn::GetAtt'
      ][0];
      const timeout = Number(functions.find(([id]) => id === fnId)?.[1].Properties.Timeout);
      const window = Number(mapping.Properties.MaximumBatchingWindowInSeconds ?? 0);
      expect(Number(resources[queueId]?.Properties.VisibilityTimeout)).toBeGreaterThanOrEqual(
        6 * timeout + window,
      );
    }
  });

  it('denies every non-TLS request to the queues and the bucket', () => {
    const denyInsecure = Match.objectLike({
      Effect: 'Deny',
      Condition: { Bool: { 'aws:SecureTransport': 'false' } },
    });
    template.resourcePropertiesCountIs(
      'AWS::SQS::QueuePolicy',
      { PolicyDocument: { Statement: Match.arrayWith([denyInsecure]) } },
      4,
    );
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([denyInsecure]) },
    });
  });

  it('blocks public access to the bucket, encrypts it and ages its prefixes', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          { ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } },
        ],
      },
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({
            Prefix: 'raw/',
            Transitions: [{ StorageClass: 'STANDARD_IA', TransitionInDays: 30 }],
          }),
          Match.objectLike({ Prefix: 'rejects/', ExpirationInDays: 90 }),
        ]),
      },
    });
  });

  it('keeps the table on demand with point-in-time recovery and the TTL attribute', () => {
    // The key and TTL attribute the item layout (and `onceflow table check`) expects.
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: TABLE_KEY.partition, KeyType: 'HASH' },
        { AttributeName: TABLE_KEY.sort, KeyType: 'RANGE' },
      ],
      TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      Replicas: [
        Match.objectLike({
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          DeletionProtectionEnabled: false,
        }),
      ],
    });
  });

  it('indexes exactly the pending ledger entries and the orders the adapter writes and queries (sparse indexes)', () => {
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      GlobalSecondaryIndexes: [
        {
          IndexName: PENDING_INDEX,
          KeySchema: [
            { AttributeName: PENDING_ATTRIBUTE, KeyType: 'HASH' },
            { AttributeName: PENDING_SORT_ATTRIBUTE, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['batchId', 'archiveKey'] },
        },
        {
          IndexName: CUSTOMER_INDEX,
          KeySchema: [
            { AttributeName: CUSTOMER_ATTRIBUTE, KeyType: 'HASH' },
            { AttributeName: CUSTOMER_SORT_ATTRIBUTE, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ],
      AttributeDefinitions: Match.arrayWith([
        { AttributeName: PENDING_ATTRIBUTE, AttributeType: 'S' },
        { AttributeName: PENDING_SORT_ATTRIBUTE, AttributeType: 'N' },
        { AttributeName: CUSTOMER_ATTRIBUTE, AttributeType: 'S' },
        { AttributeName: CUSTOMER_SORT_ATTRIBUTE, AttributeType: 'S' },
      ]),
    });
  });

  it('gives each function exactly the statements it needs: its own log group, its queues, its table and bucket prefixes', () => {
    /** A resource as `LogicalId.Attribute`, `LogicalId` or joined text, for exact comparison. */
    const name = (v: unknown): string => {
      if (typeof v === 'string') return v;
      const o = v as Record<string, unknown>;
      if ('Fn::GetAtt' in o) return (o['Fn::GetAtt'] as string[]).join('.');
      if ('Ref' in o) return String(o.Ref);
      const [sep, parts] = o['Fn::Join'] as [string, unknown[]];
      return parts.map(name).join(sep);
    };
    const statementsOf = (fn: { fn: { role?: unknown } }) => {
      const role = logicalId(fn.fn.role as unknown as { node: { defaultChild?: unknown } });
      return Object.values(resources)
        .filter((r) => r.Type === 'AWS::IAM::Policy')
        .filter((r) => JSON.stringify(r.Properties.Roles) === JSON.stringify([{ Ref: role }]))
        .flatMap(
          (r) =>
            (r.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
        )
        .map((st) => ({
          effect: st.Effect,
          actions: [st.Action].flat().sort(),
          resources: [st.Resource].flat().map(name),
          ...(st.Condition ? { conditions: st.Condition } : {}),
        }))
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    };
    const arn = (c: { node: { defaultChild?: unknown } }) => `${logicalId(c)}.Arn`;
    const bucket = arn(stack.data.bucket);
    const table = arn(stack.table.table);
    const logs = (fn: SqsFunction | ScheduledFunction) =>
      arn(fn.node.findChild('Logs') as unknown as { node: { defaultChild?: unknown } });
    const consume = [
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
    ];
    const sorted = (
      list: { effect: string; actions: string[]; resources: string[]; conditions?: unknown }[],
    ) => list.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    const allow = (actions: string[], resources: string[], conditions?: unknown) => ({
      effect: 'Allow',
      actions: actions.sort(),
      resources,
      ...(conditions ? { conditions } : {}),
    });
    const listing = (prefix: string) =>
      allow(['s3:ListBucket'], [bucket], { StringLike: { 's3:prefix': [prefix] } });
    expect(statementsOf(stack.ingest)).toEqual(
      sorted([
        allow(['logs:CreateLogStream', 'logs:PutLogEvents'], [logs(stack.ingest)]),
        allow([...consume], [arn(stack.ordersQueue.queue)]),
        allow(
          ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
          [table],
        ),
        allow(
          ['s3:PutObject'],
          [`${bucket}/raw/*`, `${bucket}/arrivals/*`, `${bucket}/rejects/ingest/*`],
        ),
        allow(['s3:GetObject'], [`${bucket}/raw/*`]),
        listing('raw/*'),
        allow(
          ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
          [arn(stack.aggregateQueue.queue)],
        ),
      ]),
    );
    expect(statementsOf(stack.aggregate)).toEqual(
      sorted([
        allow(['logs:CreateLogStream', 'logs:PutLogEvents'], [logs(stack.aggregate)]),
        allow([...consume], [arn(stack.aggregateQueue.queue)]),
        allow(['dynamodb:BatchGetItem', 'dynamodb:Query'], [table]),
        allow(
          ['s3:DeleteObject', 's3:GetObject', 's3:PutObject'],
          [`${bucket}/aggregates/hourly/*`],
        ),
        allow(['s3:PutObject'], [`${bucket}/rejects/aggregate/*`]),
        listing('aggregates/hourly/*'),
      ]),
    );
    // The watcher queries the pending index only, never the table.
    expect(statementsOf(stack.watchPending)).toEqual(
      sorted([
        allow(['logs:CreateLogStream', 'logs:PutLogEvents'], [logs(stack.watchPending)]),
        allow(['dynamodb:Query'], [`${table}/index/PendingBatches`]),
      ]),
    );
    // The finalizer: the watermark, marks and cursor, the pending index, the hour objects.
    expect(statementsOf(stack.finalizeHours)).toEqual(
      sorted([
        allow(['logs:CreateLogStream', 'logs:PutLogEvents'], [logs(stack.finalizeHours)]),
        allow(
          [
            'dynamodb:BatchGetItem',
            'dynamodb:GetItem',
            'dynamodb:PutItem',
            'dynamodb:Query',
            'dynamodb:UpdateItem',
          ],
          [table],
        ),
        allow(['dynamodb:Query'], [`${table}/index/PendingBatches`]),
        allow(
          ['s3:DeleteObject', 's3:GetObject', 's3:PutObject'],
          [`${bucket}/aggregates/hourly/*`],
        ),
        allow(['s3:ListBucket'], [bucket], {
          StringLike: { 's3:prefix': ['raw/*', 'aggregates/hourly/*'] },
        }),
      ]),
    );
    // No managed policy: AWSLambdaBasicExecutionRole would allow log writes everywhere.
    for (const fn of [stack.ingest, stack.aggregate, stack.watchPending, stack.finalizeHours]) {
      const role = logicalId(fn.fn.role as unknown as { node: { defaultChild?: unknown } });
      expect(resources[role]?.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  it('alarms on DLQ messages, message age, errors, throttles, quarantined input and conflicts', () => {
    const metrics = Object.values(resources)
      .filter((r) => r.Type === 'AWS::CloudWatch::Alarm')
      .map((r) => `${r.Properties.Namespace}/${r.Properties.MetricName}`)
      .sort();
    expect(metrics).toEqual([
      'AWS/Lambda/Errors',
      'AWS/Lambda/Errors',
      'AWS/Lambda/Errors',
      'AWS/Lambda/Errors',
      'AWS/Lambda/Throttles',
      'AWS/Lambda/Throttles',
      'AWS/Lambda/Throttles',
      'AWS/Lambda/Throttles',
      'AWS/SQS/ApproximateAgeOfOldestMessage',
      'AWS/SQS/ApproximateAgeOfOldestMessage',
      'AWS/SQS/ApproximateNumberOfMessagesVisible',
      'AWS/SQS/ApproximateNumberOfMessagesVisible',
      'onceflow/BatchConflicts',
      'onceflow/EventConflicts',
      'onceflow/LateAfterFinal',
      'onceflow/OldestPendingBatchAge',
      'onceflow/RejectedMessages',
      'onceflow/TooLateEvents',
    ]);
    // No data is no trouble: an idle pipeline's alarms stay OK, and one bad minute is enough.
    const alarms = Object.values(resources).filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
    expect(
      new Set(
        alarms.map((r) => `${r.Properties.TreatMissingData} ${r.Properties.EvaluationPeriods}`),
      ),
    ).toEqual(new Set(['notBreaching 1']));
    // One message in a DLQ, the most seen in the minute; a message waiting 5 minutes, the oldest.
    const queueAlarm = (MetricName: string, Threshold: number) =>
      template.resourcePropertiesCountIs(
        'AWS::CloudWatch::Alarm',
        {
          Namespace: 'AWS/SQS',
          MetricName,
          Statistic: 'Maximum',
          Period: 60,
          Threshold,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        },
        2,
      );
    queueAlarm('ApproximateNumberOfMessagesVisible', 1);
    queueAlarm('ApproximateAgeOfOldestMessage', 300);
    for (const MetricName of ['Errors', 'Throttles'])
      template.resourcePropertiesCountIs(
        'AWS::CloudWatch::Alarm',
        { Namespace: 'AWS/Lambda', MetricName, Statistic: 'Sum', Threshold: 1 },
        4,
      );
    // A batch in progress for 15 minutes (three watcher runs): its message is stuck.
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'onceflow',
      MetricName: 'OldestPendingBatchAge',
      Statistic: 'Maximum',
      Threshold: 900,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    // The producer alarms read the functions' own metrics, where Powertools writes them, and
    // fire on one occurrence, each saying why it matters and what to run.
    for (const [name, pointer] of [
      ['RejectedMessages', 'onceflow rejects'],
      ['BatchConflicts', 'onceflow rejects'],
      ['EventConflicts', 'onceflow rejects'],
      ['LateAfterFinal', 'amendments'],
      ['TooLateEvents', 'onceflow rejects --reason too-late'],
    ]) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'onceflow',
        MetricName: name,
        Dimensions: [{ Name: 'service', Value: 'test' }],
        Statistic: 'Sum',
        Threshold: 1,
        AlarmDescription: Match.stringLikeRegexp(`^${name}: .*${pointer}`),
      });
    }
    template.resourcePropertiesCountIs(
      'AWS::Lambda::Function',
      {
        Environment: {
          Variables: Match.objectLike({
            POWERTOOLS_METRICS_NAMESPACE: 'onceflow',
            POWERTOOLS_SERVICE_NAME: 'test',
          }),
        },
      },
      4,
    );
    template.hasOutput('MetricsService', { Value: 'test' });
    template.resourceCountIs('AWS::SNS::Topic', 0);
  });

  it('draws one dashboard: queues, DLQs, ingest outcomes, hours, functions and the table', () => {
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    const [dashboard] = Object.values(resources).filter(
      (r) => r.Type === 'AWS::CloudWatch::Dashboard',
    );
    const body = JSON.stringify(dashboard?.Properties.DashboardBody);
    for (const title of [
      'Queue depth (visible messages)',
      'Age of the oldest message (s)',
      'DLQ messages',
      'Batches per minute',
      'Events per minute',
      'Hours per minute',
      'Function duration (p50, p99 ms)',
      'Function errors and throttles',
      'Table capacity (units per minute)',
    ]) {
      expect(body).toContain(title);
    }
    for (const metric of [
      'ApproximateNumberOfMessagesVisible',
      'ApproximateAgeOfOldestMessage',
      'BatchesApplied',
      'DuplicateBatches',
      'CommitConflictRetries',
      'StaleEvents',
      'RejectedMessages',
      'EventConflicts',
      'HoursWritten',
      'FailedRecords',
      'Duration',
      'Errors',
      'Throttles',
      'ConsumedWriteCapacityUnits',
      'ConsumedReadCapacityUnits',
      'ThrottledRequests',
    ]) {
      expect(body).toContain(`"${metric}`.replace('"', '\\"'));
    }
  });

  it('points the functions at a restored table with -c tableName, keeping its own table', () => {
    const restored = synth({ tableName: 'onceflow-dev-restored-20261201' });
    const json = restored.template.toJSON() as {
      Resources: Resources;
      Outputs: Record<string, { Value: unknown }>;
    };
    // The stack's own table is still there, untouched.
    restored.template.resourceCountIs('AWS::DynamoDB::GlobalTable', 1);
    restored.template.resourcePropertiesCountIs(
      'AWS::Lambda::Function',
      {
        Environment: {
          Variables: Match.objectLike({ TABLE_NAME: 'onceflow-dev-restored-20261201' }),
        },
      },
      4,
    );
    expect(JSON.stringify(json.Outputs.TableName?.Value)).toContain(
      'onceflow-dev-restored-20261201',
    );
    const policies = Object.values(json.Resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .map((r) => JSON.stringify(r.Properties));
    const dynamo = policies.filter((p) => p.includes('dynamodb:'));
    expect(dynamo.length).toBeGreaterThan(0);
    for (const p of dynamo) expect(p).toContain(':table/onceflow-dev-restored-20261201');
  });

  it('refuses a tableName that is not a DynamoDB table name', () => {
    expect(() => synth({ tableName: 'no spaces allowed' })).toThrow(/tableName/);
  });

  it('outputs every queue URL, the table and the bucket for the tools', () => {
    const outputs = Object.keys(template.toJSON().Outputs as object);
    for (const name of [
      'OrdersQueueUrl',
      'OrdersDlqUrl',
      'AggregateQueueUrl',
      'AggregateDlqUrl',
      'TableName',
      'BucketName',
    ]) {
      expect(outputs).toContain(name);
    }
  });

  it('outputs the late policy the functions are deployed with, for replay rejects', () => {
    template.hasOutput('LatePolicy', { Value: 'amend' });
    const { template: quarantining } = synth({ latePolicy: 'quarantine' });
    quarantining.hasOutput('LatePolicy', { Value: 'quarantine' });
    quarantining.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ LATE_POLICY: 'quarantine' }) },
    });
  });

  it('passes the AWS Solutions checks with every suppression reasoned', () => {
    const report = readValidationReport(outdir);
    const nag = report.pluginReports.find((r) => r.pluginName === 'AwsSolutions');
    expect(nag?.conclusion).toBe('success');
    expect(nag?.violations).toEqual([]);
    // Every acknowledgement is in the report (full rule ids), each with its reason; the functions'
    // roles need none (no managed policy).
    const rules = (nag?.suppressedViolations ?? []).map((v) => v.ruleName.split('[')[0]).sort();
    // One per object prefix: raw/, arrivals/ and rejects/ingest/; aggregates/ and rejects/aggregate/;
    // the finalizer's aggregates/. One per function for its runtime, Node 24 as pinned.
    expect(rules).toEqual([
      'AwsSolutions-IAM5',
      'AwsSolutions-IAM5',
      'AwsSolutions-IAM5',
      'AwsSolutions-IAM5',
      'AwsSolutions-IAM5',
      'AwsSolutions-IAM5',
      'AwsSolutions-L1',
      'AwsSolutions-L1',
      'AwsSolutions-L1',
      'AwsSolutions-L1',
      'AwsSolutions-S1',
    ]);
    for (const s of nag?.suppressedViolations ?? []) expect(s.reason.length).toBeGreaterThan(20);
  });

  it('passes CloudFormation’s rules as CDK checks them at synthesis, which fails on a template they refuse', () => {
    // A clean report has no entry of CDK's validator; a finding would be one, even as a warning.
    const names = readValidationReport(outdir).pluginReports.map((r) => r.pluginName);
    expect(names).toEqual(['AwsSolutions']);
    // With cdk.json's flag a finding is an error: `cdk synth` fails rather than warn.
    const app = new App({
      outdir: mkdtempSync(join(tmpdir(), 'onceflow-cdk-')),
      context: { ...CDK_JSON_CONTEXT, [BUNDLING_STACKS]: [] },
    });
    const broken = new OnceflowStack(app, 'broken', { settings: readSettings(() => undefined) });
    const table = broken.node.findAll().find((c) => c instanceof CfnGlobalTable);
    if (!(table instanceof CfnGlobalTable)) throw new Error('the stack has no table');
    // A misspelled property, as an escape hatch's override can write it.
    table.addPropertyOverride('BillingMod', 'PAY_PER_REQUEST');
    expect(() => app.synth()).toThrow(
      /ERROR BillingMod: Additional properties are not allowed \('BillingMod' was unexpected/,
    );
  });
});

describe('stages and settings', () => {
  it('protects and retains data outside dev, and wires alarms to an SNS topic when an email is given', () => {
    const { template } = synth({
      stage: 'prod',
      alarmEmail: 'ops@example.com',
      ledgerRetentionDays: '45',
    });
    template.hasResource('AWS::DynamoDB::GlobalTable', { DeletionPolicy: 'Retain' });
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      Replicas: [Match.objectLike({ DeletionProtectionEnabled: true })],
    });
    template.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Retain' });
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
    });
    template.allResourcesProperties('AWS::CloudWatch::Alarm', { AlarmActions: [Match.anyValue()] });
    // The topic is encrypted with the stack's key, whose policy lets CloudWatch publish.
    template.hasResourceProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: { 'Fn::GetAtt': [Match.stringLikeRegexp('TopicKey'), 'Arn'] },
    });
    template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Sid: 'CloudWatchAlarmsPublish',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          }),
        ]),
      },
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ LEDGER_RETENTION_DAYS: '45' }) },
    });
  });

  it('traces every function with X-Ray and bundles the tracer only when tracing is on', () => {
    const functions = (t: Template) =>
      // The stack's own three (not the custom resource providers CDK adds).
      Object.values(t.toJSON().Resources as Resources).filter(
        (r) =>
          r.Type === 'AWS::Lambda::Function' &&
          String(JSON.stringify(r.Properties.Environment)).includes('POWERTOOLS_SERVICE_NAME'),
      );
    const bundle = (dir: string, fn: { Properties: Record<string, unknown> }) => {
      const key = (fn.Properties.Code as { S3Key: string }).S3Key.replace(/\.zip$/, '');
      return readFileSync(join(dir, `asset.${key}`, 'index.mjs'), 'utf8');
    };
    const off = synth({}, {}, { bundle: true });
    const on = synth({ tracing: 'true' }, {}, { bundle: true });

    expect(functions(off.template).map((f) => f.Properties.TracingConfig)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    on.template.resourcePropertiesCountIs(
      'AWS::Lambda::Function',
      {
        TracingConfig: { Mode: 'Active' },
        Environment: { Variables: Match.objectLike({ POWERTOOLS_TRACE_ENABLED: 'true' }) },
      },
      4,
    );
    // Each role gains exactly the two X-Ray calls, which take no resource but "*".
    const xray = Object.values(on.template.toJSON().Resources as Resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap(
        (r) => (r.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
      )
      .filter((st) => JSON.stringify(st.Action).includes('xray:'));
    expect(xray).toEqual(
      Array(4).fill({
        Effect: 'Allow',
        Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'],
        Resource: '*',
      }),
    );
    // The X-Ray SDK is in the traced bundles only; the others merely name the tracer.
    for (const fn of functions(off.template)) {
      const code = bundle(off.assembly.directory, fn);
      expect(code).toContain('@aws-lambda-powertools/tracer');
      expect(code).not.toContain('AWS_XRAY_DAEMON_ADDRESS');
    }
    for (const fn of functions(on.template)) {
      expect(bundle(on.assembly.directory, fn)).toContain('AWS_XRAY_DAEMON_ADDRESS');
    }
    const nag = readValidationReport(on.assembly.directory).pluginReports.find(
      (r) => r.pluginName === 'AwsSolutions',
    );
    expect(nag?.violations).toEqual([]);
    expect(
      nag?.suppressedViolations.filter((v) => v.ruleName === 'AwsSolutions-IAM5[Resource::*]'),
    ).toHaveLength(4);
  });

  it('rejects invalid context naming the key', () => {
    expect(() => readSettings((k) => ({ stage: 'Prod!' })[k])).toThrow(/stage/);
    expect(() => readSettings((k) => ({ alarmEmail: 'nobody' })[k])).toThrow(/alarmEmail/);
  });

  it('sizes the queue’s visibility timeout from the function timeout and batching window', () => {
    const { template } = synth(
      {},
      { ingest: { timeout: Duration.seconds(40), maxBatchingWindow: Duration.seconds(20) } },
    );
    template.hasResourceProperties('AWS::SQS::Queue', { VisibilityTimeout: 260 });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      MaximumBatchingWindowInSeconds: 20,
    });
  });

  it('refuses a batching window that would break the visibility-timeout rule', () => {
    const stack = new Stack(new App(), 'constructs');
    const source = new QueueWithDlq(stack, 'Q', { visibilityTimeout: Duration.seconds(180) });
    const props = {
      entry: 'functions/ingest-orders.ts',
      source,
      environment: {},
      removalPolicy: RemovalPolicy.DESTROY,
    };
    expect(
      () => new SqsFunction(stack, 'TooLong', { ...props, maxBatchingWindow: Duration.seconds(5) }),
    ).toThrow(/must be at least 6 × timeout \+ batching window \(185s\)/);
  });

  it('refuses a DLQ that would not outlive its source queue', () => {
    const stack = new Stack(new App(), 'constructs');
    expect(
      () =>
        new QueueWithDlq(stack, 'Q', {
          visibilityTimeout: Duration.seconds(60),
          retentionPeriod: Duration.days(14),
        }),
    ).toThrow(/DLQ retention .* must exceed/);
  });
});
