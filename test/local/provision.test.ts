import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { HeadBucketCommand } from '@aws-sdk/client-s3';
import { ListTopicsCommand } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { Duration, Stack } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { OnceflowStack } from '../../infra/onceflow-stack.ts';
import { readSettings } from '../../infra/settings.ts';
import { adminClients } from '../../local/clients.ts';
import { LOCAL_REGION } from '../../local/emulators.ts';
import { provisionStack } from '../../local/provision.ts';
import {
  createOrKeepTable,
  KeptDataMismatchError,
  tableInput,
} from '../../local/provision-table.ts';
import { queueAttributes } from '../../local/queue-attributes.ts';
import { loadStack } from '../../local/template.ts';
import { synthAssembly } from '../support/assembly.ts';
import { createAdminClients, uniqueName } from '../support/pipeline.ts';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

describe('provisioning from the synthesized template', () => {
  it('creates the onceflow stack’s queues, table and bucket exactly as the template says', async () => {
    const { assemblyDir } = inject('assembly');
    const { template } = loadStack(assemblyDir);
    const clients = createAdminClients();
    const stack = await provisionStack(
      { ...loadStack(assemblyDir), stackName: uniqueName('prov') },
      clients,
      LOCAL_REGION,
    );
    const resources = template.Resources as Resources;

    const templateQueues = Object.entries(resources).filter(
      ([, r]) => r.Type === 'AWS::SQS::Queue',
    );
    expect(stack.queues.map((q) => q.logicalId).sort()).toEqual(
      templateQueues.map(([id]) => id).sort(),
    );
    for (const [id, resource] of templateQueues) {
      const queue = stack.queues.find((q) => q.logicalId === id);
      const attrs =
        (
          await clients.sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: queue?.url, AttributeNames: ['All'] }),
          )
        ).Attributes ?? {};
      expect(attrs.MessageRetentionPeriod).toBe(String(resource.Properties.MessageRetentionPeriod));
      expect(attrs.VisibilityTimeout).toBe(String(resource.Properties.VisibilityTimeout ?? 30));
      const redrive = resource.Properties.RedrivePolicy as
        | { deadLetterTargetArn: { 'Fn::GetAtt': [string] }; maxReceiveCount: number }
        | undefined;
      if (redrive) {
        const dlq = stack.queues.find(
          (q) => q.logicalId === redrive.deadLetterTargetArn['Fn::GetAtt'][0],
        );
        expect(JSON.parse(attrs.RedrivePolicy ?? '{}')).toEqual({
          deadLetterTargetArn: dlq?.arn,
          maxReceiveCount: redrive.maxReceiveCount,
        });
      } else expect(attrs.RedrivePolicy).toBeUndefined();
    }

    const [tableId, tableResource] =
      Object.entries(resources).find(([, r]) => r.Type === 'AWS::DynamoDB::GlobalTable') ?? [];
    const table = stack.tables.find((t) => t.logicalId === tableId);
    const described = (
      await clients.dynamo.send(new DescribeTableCommand({ TableName: table?.name }))
    ).Table;
    expect(described?.KeySchema).toEqual(tableResource?.Properties.KeySchema);
    expect(described?.AttributeDefinitions).toEqual(tableResource?.Properties.AttributeDefinitions);
    expect(described?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    const ttl = await clients.dynamo.send(
      new DescribeTimeToLiveCommand({ TableName: table?.name }),
    );
    expect(ttl.TimeToLiveDescription).toMatchObject({
      AttributeName: 'expiresAt',
      TimeToLiveStatus: 'ENABLED',
    });

    await expect(
      clients.s3.send(new HeadBucketCommand({ Bucket: stack.outputs.BucketName })),
    ).resolves.toBeTruthy();
    expect(stack.outputs.TableName).toBe(table?.name);
    expect(stack.outputs.OrdersQueueUrl).toBe(
      stack.queues.find(
        (q) => q.logicalId.startsWith('OrdersQueue') && !q.logicalId.includes('Dlq'),
      )?.url,
    );
    expect(stack.notEmulated).toEqual(
      expect.arrayContaining(['AWS::CloudWatch::Dashboard', 'AWS::IAM::Role']),
    );
    // Every alarm is evaluated locally, under the name `<stack>-<logicalId>`.
    const declared = Object.entries(template.Resources).filter(
      ([, r]) => r.Type === 'AWS::CloudWatch::Alarm',
    );
    expect(stack.alarms.map((a) => a.alarm.AlarmName).sort()).toEqual(
      declared.map(([id]) => `${stack.stackName}-${id}`).sort(),
    );
    expect(stack.notRun.filter((line) => line.startsWith('Alarms'))).toEqual([]);
  });

  it('creates the alarm topic of a stack with an alarm email, its alarms’ actions naming it, and names the email subscription as not delivered', async () => {
    const { assemblyDir, stackName, remove } = synthAssembly(
      (app, name) =>
        new OnceflowStack(app, name, {
          settings: readSettings((k) => ({ alarmEmail: 'ops@example.com' })[k]),
        }),
    );
    onTestFinished(remove);
    const clients = adminClients(inject('endpoint'), LOCAL_REGION);
    const stack = await provisionStack(loadStack(assemblyDir, stackName), clients, LOCAL_REGION);
    const { Topics = [] } = await clients.sns.send(new ListTopicsCommand({}));
    const topic = Topics.map((t) => t.TopicArn).find((arn) =>
      arn?.includes(`:${stackName}-Alarms`),
    );
    expect(topic).toBeDefined();
    for (const { alarm } of stack.alarms) expect(alarm.AlarmActions).toEqual([topic]);
    expect(stack.notRun).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /: its email subscriber is not delivered to \(only SQS subscribers are, locally\)$/,
        ),
      ]),
    );
    expect(stack.notEmulated).not.toContain('AWS::SNS::Topic');
  });

  it('resolves every function’s environment to the local resources and reads each event source mapping', async () => {
    const { assemblyDir } = inject('assembly');
    const clients = createAdminClients();
    const stack = await provisionStack(
      { ...loadStack(assemblyDir), stackName: uniqueName('prov') },
      clients,
      LOCAL_REGION,
    );
    const ingest = stack.functions.find((f) => f.logicalId.startsWith('IngestOrders'));
    expect(ingest?.environment).toMatchObject({
      TABLE_NAME: stack.outputs.TableName,
      BUCKET_NAME: stack.outputs.BucketName,
      AGGREGATE_QUEUE_URL: stack.outputs.AggregateQueueUrl,
    });
    expect(ingest?.handlerFile).toMatch(/asset\.[0-9a-f]+\/index\.mjs$/);
    expect(ingest?.timeoutSeconds).toBe(30);
    expect(stack.mappings).toHaveLength(2);
    const mappingOf = (prefix: string) => {
      const fn = stack.functions.find((f) => f.logicalId.startsWith(prefix));
      return stack.mappings.find((m) => m.functionLogicalId === fn?.logicalId);
    };
    expect(mappingOf('IngestOrders')).toMatchObject({
      batchSize: 10,
      batchingWindowSeconds: 0,
      maxConcurrency: 10,
      reportBatchItemFailures: true,
      enabled: true,
    });
    expect(mappingOf('AggregateHours')).toMatchObject({
      batchSize: 10,
      batchingWindowSeconds: 0,
      maxConcurrency: 10,
      reportBatchItemFailures: true,
      enabled: true,
    });
    // The scheduled rules: the pending watcher and the finalizer, every 5 minutes, each run
    // tried once (the functions' event invoke configs turn Lambda's async retries off).
    expect(
      stack.schedules.map((s) => [
        s.expression.text,
        s.input,
        stack.functions.find((f) => f.logicalId === s.functionLogicalId)?.asyncInvoke,
        s.ruleName,
      ]),
    ).toEqual(
      ['WatchPending', 'FinalizeHours'].map((id) => [
        'rate(5 minutes)',
        { kind: 'event' },
        { maximumRetryAttempts: 0, maximumEventAgeSeconds: 300 },
        expect.stringMatching(new RegExp(`^${stack.stackName}-${id}Schedule`)),
      ]),
    );
    // The queue-triggered functions are invoked synchronously: no config, Lambda's defaults.
    expect(
      stack.functions.find((f) => f.logicalId.startsWith('IngestOrders'))?.asyncInvoke,
    ).toBeUndefined();
    expect(stack.notEmulated).not.toContain('AWS::Events::Rule');
    expect(stack.notEmulated).not.toContain('AWS::Lambda::EventInvokeConfig');
    expect(stack.notRun).toEqual([]);
    expect(stack.differences).toEqual([]);
    expect(stack.cautions).toEqual([]);
    // The aggregate queue coalesces (aggregateWindowSeconds): FIFO, per group, delayed 2 s.
    const aggregate = stack.queues.find((q) => q.url === stack.outputs.AggregateQueueUrl);
    expect(aggregate?.url).toMatch(/\.fifo$/);
    const { Attributes } = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: aggregate?.url, AttributeNames: ['All'] }),
    );
    expect(Attributes).toMatchObject({
      FifoQueue: 'true',
      DelaySeconds: '2',
      DeduplicationScope: 'messageGroup',
      FifoThroughputLimit: 'perMessageGroupId',
    });
  });

  it('creates a small stack’s named queue, FIFO queue, indexes and intrinsic-built names', async () => {
    const { assemblyDir, stackName, remove } = synthAssembly((app, name) => {
      const stack = new Stack(app, name);
      const dlq = new Queue(stack, 'Dead', { queueName: `${name}-dead` });
      new Queue(stack, 'Work', {
        visibilityTimeout: Duration.seconds(42),
        deliveryDelay: Duration.seconds(3),
        deadLetterQueue: { queue: dlq, maxReceiveCount: 2 },
      });
      new Queue(stack, 'Ordered', { fifo: true, contentBasedDeduplication: true });
      const table = new Table(stack, 'Things', {
        partitionKey: { name: 'id', type: AttributeType.STRING },
        billingMode: BillingMode.PAY_PER_REQUEST,
        timeToLiveAttribute: 'ttl',
      });
      table.addGlobalSecondaryIndex({
        indexName: 'byOwner',
        partitionKey: { name: 'owner', type: AttributeType.STRING },
        projectionType: ProjectionType.KEYS_ONLY,
      });
      new Bucket(stack, 'Files');
      return stack;
    });
    onTestFinished(remove);
    const clients = createAdminClients();
    const stack = await provisionStack(loadStack(assemblyDir, stackName), clients, LOCAL_REGION);
    const work = stack.queues.find((q) => q.logicalId.startsWith('Work'));
    const dead = stack.queues.find((q) => q.logicalId.startsWith('Dead'));
    expect(dead?.name).toBe(`${stackName}-dead`);
    const attrs =
      (
        await clients.sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: work?.url, AttributeNames: ['All'] }),
        )
      ).Attributes ?? {};
    expect(attrs).toMatchObject({ VisibilityTimeout: '42', DelaySeconds: '3' });
    expect(JSON.parse(attrs.RedrivePolicy ?? '{}')).toEqual({
      deadLetterTargetArn: dead?.arn,
      maxReceiveCount: 2,
    });
    const ordered = stack.queues.find((q) => q.logicalId.startsWith('Ordered'));
    expect(ordered?.name.endsWith('.fifo')).toBe(true);
    const table = (
      await clients.dynamo.send(new DescribeTableCommand({ TableName: stack.tables[0]?.name }))
    ).Table;
    expect(
      table?.GlobalSecondaryIndexes?.map((g) => [g.IndexName, g.Projection?.ProjectionType]),
    ).toEqual([['byOwner', 'KEYS_ONLY']]);
    expect(stack.tables[0]?.ttlAttribute).toBe('ttl');
    expect(stack.buckets).toHaveLength(1);
  });
});

describe('a template the emulators cannot follow or Lambda would refuse', () => {
  it('names the table and the property when a table’s key schema is not DynamoDB’s', async () => {
    const table = {
      Type: 'AWS::DynamoDB::Table',
      Metadata: {},
      Properties: {
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'PRIMARY' }],
        BillingMode: 'PAY_PER_REQUEST',
      },
    };
    const stackName = uniqueName('bad-table');
    await expect(
      provisionStack(
        { stackName, assemblyDir: '.', template: { Resources: { Things: table }, Outputs: {} } },
        createAdminClients(),
        LOCAL_REGION,
      ),
    ).rejects.toThrow(/table Things cannot be created locally: KeySchema\.0\.KeyType: /);
  });

  it('refuses a function whose environment Lambda would refuse, measured once its references resolve', async () => {
    const template = (variables: Record<string, unknown>) => ({
      Resources: {
        Work: { Type: 'AWS::SQS::Queue', Metadata: {}, Properties: {} },
        Fn: {
          Type: 'AWS::Lambda::Function',
          Metadata: { 'aws:asset:path': 'asset.fn' },
          Properties: { Handler: 'index.handler', Environment: { Variables: variables } },
        },
      },
      Outputs: {},
    });
    const provision = (variables: Record<string, unknown>) =>
      provisionStack(
        { stackName: uniqueName('bad-fn'), assemblyDir: '.', template: template(variables) },
        createAdminClients(),
        LOCAL_REGION,
      );
    // Under 4 KB as written (the reference is 14 characters), over it with the queue's URL.
    const pad = 'x'.repeat(4096 - '{"QUEUE_URL":"","PAD":""}'.length - 30);
    const refused = await provision({ QUEUE_URL: { Ref: 'Work' }, PAD: pad }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(Error);
    const measured =
      /^function Fn cannot be created: .* exceeded the 4KB limit \((\d+) bytes measured, 4096 allowed\)$/.exec(
        (refused as Error).message,
      );
    expect(Number(measured?.[1])).toBeGreaterThan(4096);
    await expect(provision({ AWS_REGION: 'eu-west-1' })).rejects.toThrow(
      /^function Fn cannot be created: .*Reserved keys used in this request: AWS_REGION$/,
    );
  });

  it('refuses a stack whose queue would come back to a function still running, as Lambda refuses its mapping', async () => {
    const stack = loadStack(inject('assembly').assemblyDir);
    const template = structuredClone(stack.template);
    const ingest = Object.entries(template.Resources).find(
      ([id, r]) => id.startsWith('IngestOrders') && r.Type === 'AWS::Lambda::Function',
    )?.[1];
    if (!ingest) throw new Error('no ingest function in the template');
    // Longer than the orders queue's visibility timeout: a message could be received again
    // while the invocation that has it still runs.
    ingest.Properties.Timeout = 900;
    const refused = await provisionStack(
      { ...stack, stackName: uniqueName('bad-esm'), template },
      createAdminClients(),
      LOCAL_REGION,
    ).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(
      /^event source mapping \S+ cannot be created: Queue visibility timeout: \d+ seconds is less than Function timeout: 900 seconds$/,
    );
  });

  it('names a function it cannot run, what would invoke it, and what runs differently, rather than refusing the stack', async () => {
    const assemblyDir = mkdtempSync(join(tmpdir(), 'onceflow-runtimes-'));
    mkdirSync(join(assemblyDir, 'asset.node'));
    writeFileSync(join(assemblyDir, 'asset.node', 'index.mjs'), 'export const handler = () => 1;');
    const fn = (runtime: string, asset: string) => ({
      Type: 'AWS::Lambda::Function',
      Metadata: { 'aws:asset:path': asset },
      Properties: { Handler: 'index.handler', Runtime: runtime },
    });
    const stack = await provisionStack(
      {
        stackName: uniqueName('runtimes'),
        assemblyDir,
        template: {
          Resources: {
            Work: { Type: 'AWS::SQS::Queue', Metadata: {}, Properties: {} },
            Node: {
              ...fn('nodejs24.x', 'asset.node'),
              Properties: {
                Handler: 'index.handler',
                Runtime: 'nodejs24.x',
                Layers: [
                  'arn:aws:lambda:us-east-1:094274105915:layer:AWSLambdaPowertoolsTypeScriptV2:40',
                ],
              },
            },
            NodeTrigger: {
              Type: 'AWS::Lambda::EventSourceMapping',
              Metadata: {},
              Properties: {
                EventSourceArn: { 'Fn::GetAtt': ['Work', 'Arn'] },
                FunctionName: { Ref: 'Node' },
                FilterCriteria: { Filters: [{ Pattern: '{"body":{"kind":["order"]}}' }] },
              },
            },
            SenderTrigger: {
              Type: 'AWS::Lambda::EventSourceMapping',
              Metadata: {},
              Properties: {
                EventSourceArn: { 'Fn::GetAtt': ['Work', 'Arn'] },
                FunctionName: { Ref: 'Node' },
                FilterCriteria: { Filters: [{ Pattern: '{"attributes":{"SenderId":["x"]}}' }] },
              },
            },
            Python: fn('python3.13', 'asset.python'),
            Image: {
              Type: 'AWS::Lambda::Function',
              Metadata: {},
              Properties: { PackageType: 'Image', Code: { ImageUri: 'repo:tag' } },
            },
            PythonTrigger: {
              Type: 'AWS::Lambda::EventSourceMapping',
              Metadata: {},
              Properties: {
                EventSourceArn: { 'Fn::GetAtt': ['Work', 'Arn'] },
                FunctionName: { Ref: 'Python' },
              },
            },
          },
          Outputs: { PythonArn: { Value: { 'Fn::GetAtt': ['Python', 'Arn'] } } },
        },
      },
      createAdminClients(),
      LOCAL_REGION,
    );
    expect(stack.functions.map((f) => f.logicalId)).toEqual(['Node']);
    expect(stack.mappings.map((m) => [m.logicalId, m.filters])).toEqual([
      ['NodeTrigger', [{ body: { kind: ['order'] } }]],
      ['SenderTrigger', []],
    ]);
    // What runs, but not as on AWS, is said too.
    expect(stack.differences).toEqual([
      'Node: its layer is not mounted (what its code loads from /opt is missing locally)',
      'SenderTrigger: its FilterCriteria are not applied, a filter on attributes (SQS filters take body only) (every message reaches the function; on AWS, Lambda deletes the messages no filter matches)',
    ]);
    expect(stack.notRun).toEqual([
      'Python: the python3.13 runtime (only Node.js functions run locally)',
      'Image: a container image',
      'PythonTrigger: it invokes Python, which is not run locally',
    ]);
    // Still named and known by ARN, as other resources may refer to it.
    expect(stack.outputs.PythonArn).toMatch(/:function:.*-Python$/);
  });

  it('keeps a table from an earlier run only when its keys and indexes are the template’s', async () => {
    const clients = createAdminClients();
    const name = uniqueName('kept');
    const keys = {
      AttributeDefinitions: [
        { AttributeName: 'pk', AttributeType: 'S' },
        { AttributeName: 'sk', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    };
    const indexed = {
      ...keys,
      GlobalSecondaryIndexes: [
        {
          IndexName: 'BySk',
          KeySchema: [{ AttributeName: 'sk', KeyType: 'HASH' }],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ],
    };
    expect(await createOrKeepTable(clients, tableInput('T', name, keys))).toBe(true);
    // Kept: the same layout again.
    expect(await createOrKeepTable(clients, tableInput('T', name, keys))).toBe(false);
    // A template that needs an index the kept table lacks, or other keys: named, not reused.
    await expect(createOrKeepTable(clients, tableInput('T', name, indexed))).rejects.toThrow(
      KeptDataMismatchError,
    );
    await expect(
      createOrKeepTable(
        clients,
        tableInput('T', name, {
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        }),
      ),
    ).rejects.toThrow(/has keys and indexes .*pk:HASH.*sk:RANGE.*the template/);
  });

  it('gives a queue’s properties as SQS’s attributes, and names those that are none', () => {
    expect(
      queueAttributes({
        QueueName: 'orders',
        VisibilityTimeout: 180,
        FifoQueue: true,
        RedrivePolicy: { deadLetterTargetArn: 'arn:dlq', maxReceiveCount: 5 },
        Tags: [{ Key: 'team', Value: 'orders' }],
        MessageGroupIdPolicy: 'x',
        DelaySeconds: undefined,
      }),
    ).toEqual({
      attributes: {
        VisibilityTimeout: '180',
        FifoQueue: 'true',
        RedrivePolicy: '{"deadLetterTargetArn":"arn:dlq","maxReceiveCount":5}',
      },
      others: ['MessageGroupIdPolicy'],
    });
  });
});
