/**
 * Creates a stack's queues, tables and buckets on the local emulators from its synthesized
 * template — names, queue attributes, redrive policies, key schemas, indexes, TTL — and reads
 * its functions and event source mappings. The template is the only configuration.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CreateTableCommandInput, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { AwsClients } from '../adapters/clients.ts';
import { environmentRefusal, mappingRefusal } from './lambda-quotas.ts';
import { createOrKeepTable, tableInput } from './provision-table.ts';
import {
  type AsyncInvokeConfig,
  asyncInvokeConfigs,
  type LocalSchedule,
  scheduledRules,
} from './rules.ts';
import {
  type PhysicalResource,
  type ResolveContext,
  type Resource,
  referencesOf,
  resolve,
  type StackTemplate,
} from './template.ts';
import { eventSourceMappings, type LocalEventSourceMapping } from './triggers.ts';

export type { LocalSchedule } from './rules.ts';
export type { LocalEventSourceMapping } from './triggers.ts';

export const LOCAL_ACCOUNT = '000000000000';

export interface LocalQueue {
  readonly logicalId: string;
  readonly name: string;
  readonly url: string;
  readonly arn: string;
  readonly attributes: Readonly<Record<string, string>>;
}

export interface LocalTable {
  readonly logicalId: string;
  readonly name: string;
  readonly input: CreateTableCommandInput;
  readonly ttlAttribute: string | undefined;
}

export interface LocalFunction {
  readonly logicalId: string;
  readonly name: string;
  /** The bundled code from the cloud assembly: the exact code that would be deployed. */
  readonly handlerFile: string;
  readonly handlerExport: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
  /**
   * The SHA-256 of the bundled handler, base64, as Lambda's `CodeSha256` (Lambda hashes the zip
   * it was given; locally the handler file is the package): it changes exactly when the code does.
   */
  readonly codeSha256: string;
  /** When the runtime took this code and configuration (ISO 8601), as Lambda's `LastModified`. */
  readonly lastModified: string;
  /**
   * How Lambda retries its asynchronous invocations: its `$LATEST` event invoke config; none,
   * Lambda's defaults (`LAMBDA_ASYNC_DEFAULTS`).
   */
  readonly asyncInvoke?: AsyncInvokeConfig;
}

export interface ProvisionedStack {
  readonly stackName: string;
  readonly region: string;
  readonly queues: readonly LocalQueue[];
  readonly tables: readonly LocalTable[];
  readonly buckets: readonly { logicalId: string; name: string }[];
  readonly functions: readonly LocalFunction[];
  readonly mappings: readonly LocalEventSourceMapping[];
  /** Scheduled rules targeting the stack's functions (rate and cron expressions). */
  readonly schedules: readonly LocalSchedule[];
  /** The stack outputs, resolved: what `cdk deploy` would print. */
  readonly outputs: Readonly<Record<string, string>>;
  /** Resource types that have no local meaning (IAM, alarms, log groups, policies…). */
  readonly notEmulated: readonly string[];
  /** Rules targeting a function that are not run locally, each with the reason. */
  readonly notRun: readonly string[];
  /** What each provisioned resource and function answers to `Ref` and `Fn::GetAtt`. */
  readonly physical: ReadonlyMap<string, PhysicalResource>;
}

const PROVISIONED = new Set([
  'AWS::SQS::Queue',
  'AWS::DynamoDB::Table',
  'AWS::DynamoDB::GlobalTable',
  'AWS::S3::Bucket',
]);

/** SQS attributes the template sets that mean something to a local queue. */
const QUEUE_ATTRIBUTES = [
  'VisibilityTimeout',
  'MessageRetentionPeriod',
  'DelaySeconds',
  'MaximumMessageSize',
  'ReceiveMessageWaitTimeSeconds',
  'FifoQueue',
  'ContentBasedDeduplication',
  'DeduplicationScope',
  'FifoThroughputLimit',
] as const;

/** Deterministic local names, like CloudFormation's `<stack>-<logicalId>-<suffix>` without the suffix. */
const physicalName = (stackName: string, logicalId: string, max: number) =>
  `${stackName}-${logicalId}`.slice(0, max);

const asRecord = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

/** Orders logical ids so that every resource comes after those it refers to. */
const dependencyOrder = (resources: [string, Resource][]): [string, Resource][] => {
  const byId = new Map(resources);
  const done = new Set<string>();
  const ordered: [string, Resource][] = [];
  const visit = (id: string, path: Set<string>) => {
    if (done.has(id) || !byId.has(id)) return;
    if (path.has(id)) throw new Error(`circular reference through ${id}`);
    path.add(id);
    for (const dep of referencesOf(byId.get(id)?.Properties)) visit(dep, path);
    path.delete(id);
    done.add(id);
    ordered.push([id, byId.get(id) as Resource]);
  };
  for (const [id] of resources) visit(id, new Set());
  return ordered;
};

const handlerFileOf = (
  assemblyDir: string,
  assetPath: string,
  handler: string,
): [string, string] => {
  const dot = handler.lastIndexOf('.');
  const base = handler.slice(0, dot);
  const exported = handler.slice(dot + 1);
  for (const ext of ['.mjs', '.js', '.cjs']) {
    const file = join(assemblyDir, assetPath, `${base}${ext}`);
    if (existsSync(file)) return [file, exported];
  }
  throw new Error(`no bundled handler ${base}.{mjs,js,cjs} in ${join(assemblyDir, assetPath)}`);
};

export const provisionStack = async (
  stack: StackTemplate,
  clients: AwsClients,
  region: string,
): Promise<ProvisionedStack> => {
  const { stackName, template } = stack;
  const physical = new Map<string, PhysicalResource>();
  const ctx: ResolveContext = { region, accountId: LOCAL_ACCOUNT, stackName, resources: physical };
  const entries = Object.entries(template.Resources);
  const queues: LocalQueue[] = [];
  const tables: LocalTable[] = [];
  const buckets: { logicalId: string; name: string }[] = [];

  for (const [id, resource] of dependencyOrder(
    entries.filter(([, r]) => PROVISIONED.has(r.Type)),
  )) {
    const props = asRecord(resolve(resource.Properties, ctx));
    if (resource.Type === 'AWS::SQS::Queue') {
      const fifo = props.FifoQueue === true || props.FifoQueue === 'true';
      const name =
        typeof props.QueueName === 'string'
          ? props.QueueName
          : `${physicalName(stackName, id, fifo ? 75 : 80)}${fifo ? '.fifo' : ''}`;
      const attributes: Record<string, string> = {};
      for (const key of QUEUE_ATTRIBUTES)
        if (props[key] !== undefined) attributes[key] = String(props[key]);
      if (props.RedrivePolicy !== undefined)
        attributes.RedrivePolicy = JSON.stringify(props.RedrivePolicy);
      const url =
        (
          await clients.sqs.send(
            new CreateQueueCommand({ QueueName: name, Attributes: attributes }),
          )
        ).QueueUrl ?? '';
      const arn =
        (
          await clients.sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
          )
        ).Attributes?.QueueArn ?? '';
      physical.set(id, { ref: url, attributes: { Arn: arn, QueueName: name, QueueUrl: url } });
      queues.push({ logicalId: id, name, url, arn, attributes });
    } else if (resource.Type === 'AWS::S3::Bucket') {
      const name =
        typeof props.BucketName === 'string'
          ? props.BucketName
          : physicalName(stackName, id, 63).toLowerCase();
      await clients.s3.send(new CreateBucketCommand({ Bucket: name }));
      physical.set(id, {
        ref: name,
        attributes: {
          Arn: `arn:aws:s3:::${name}`,
          DomainName: `${name}.s3.amazonaws.com`,
          RegionalDomainName: `${name}.s3.${region}.amazonaws.com`,
        },
      });
      buckets.push({ logicalId: id, name });
    } else {
      const name =
        typeof props.TableName === 'string' ? props.TableName : physicalName(stackName, id, 255);
      const input = tableInput(id, name, props);
      const created = await createOrKeepTable(clients, input);
      const ttl = asRecord(props.TimeToLiveSpecification);
      const ttlAttribute =
        ttl.Enabled === true || ttl.Enabled === 'true' ? String(ttl.AttributeName) : undefined;
      if (ttlAttribute && created) {
        await clients.dynamo.send(
          new UpdateTimeToLiveCommand({
            TableName: name,
            TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
          }),
        );
      }
      physical.set(id, {
        ref: name,
        attributes: { Arn: `arn:aws:dynamodb:${region}:${LOCAL_ACCOUNT}:table/${name}` },
      });
      tables.push({ logicalId: id, name, input, ttlAttribute });
    }
  }

  const functions = functionsOf(stack, region, physical);

  const mappings = eventSourceMappings(
    entries,
    queues.map((q) => q.logicalId),
    functions.map((f) => f.logicalId),
  );
  // Lambda checks each mapping against its queue and function when CloudFormation creates it;
  // a stack it would refuse fails here too, not first on AWS.
  for (const m of mappings) {
    const queue = queues.find((q) => q.logicalId === m.queueLogicalId);
    const fn = functions.find((f) => f.logicalId === m.functionLogicalId);
    const refusal = mappingRefusal({
      ...m,
      queue: {
        visibilityTimeoutSeconds: Number(queue?.attributes.VisibilityTimeout ?? 30),
        fifo: queue?.attributes.FifoQueue === 'true',
      },
      functionTimeoutSeconds: fn?.timeoutSeconds ?? 3,
    });
    if (refusal)
      throw new Error(`event source mapping ${m.logicalId} cannot be created: ${refusal}`);
  }
  const { schedules, notRun } = scheduledRules(
    entries,
    functions.map((f) => f.logicalId),
    { stackName, resolveValue: (value) => resolve(value, ctx) },
  );

  const outputs: Record<string, string> = {};
  for (const [name, output] of Object.entries(template.Outputs)) {
    try {
      outputs[name] = String(resolve(output.Value, ctx));
    } catch {
      // An output about something not emulated (e.g. an alarm topic) has no local value.
    }
  }
  const handled = new Set([
    ...PROVISIONED,
    'AWS::Lambda::Function',
    'AWS::Lambda::EventSourceMapping',
    'AWS::Events::Rule',
    'AWS::Lambda::EventInvokeConfig',
  ]);
  const notEmulated = [
    ...new Set(entries.map(([, r]) => r.Type).filter((t) => !handled.has(t))),
  ].sort();
  return {
    stackName,
    region,
    queues,
    tables,
    buckets,
    functions,
    mappings,
    schedules,
    outputs,
    notEmulated,
    notRun,
    physical,
  };
};

/**
 * The template's functions, read as Lambda would create them: named (functions are known by
 * name and ARN before any environment resolves, as they may refer to each other), their
 * environments resolved against `physical` (which gains the functions' own entries), each held
 * to Lambda's quotas, and their bundled handlers found in the assembly.
 */
const functionsOf = (
  stack: StackTemplate,
  region: string,
  physical: Map<string, PhysicalResource>,
): LocalFunction[] => {
  const { stackName, template, assemblyDir } = stack;
  const ctx: ResolveContext = { region, accountId: LOCAL_ACCOUNT, stackName, resources: physical };
  const lastModified = new Date().toISOString();
  const functionEntries = Object.entries(template.Resources).filter(
    ([, r]) => r.Type === 'AWS::Lambda::Function',
  );
  for (const [id, resource] of functionEntries) {
    const name =
      typeof resource.Properties.FunctionName === 'string'
        ? resource.Properties.FunctionName
        : physicalName(stackName, id, 64);
    physical.set(id, {
      ref: name,
      attributes: { Arn: `arn:aws:lambda:${region}:${LOCAL_ACCOUNT}:function:${name}` },
    });
  }
  const asyncConfigs = asyncInvokeConfigs(
    Object.entries(template.Resources),
    functionEntries.map(([id]) => id),
  );
  const functions: LocalFunction[] = [];
  for (const [id, resource] of functionEntries) {
    // Asset metadata is written when the CLI synthesizes; otherwise the code's S3 key names the asset.
    const s3Key = asRecord(resource.Properties.Code).S3Key;
    const assetPath =
      resource.Metadata['aws:asset:path'] ??
      (typeof s3Key === 'string' &&
      s3Key.endsWith('.zip') &&
      existsSync(join(assemblyDir, `asset.${s3Key.slice(0, -4)}`))
        ? `asset.${s3Key.slice(0, -4)}`
        : undefined);
    const handler = resource.Properties.Handler;
    // Functions without a local asset (e.g. CDK's own providers) are not run.
    if (typeof assetPath !== 'string' || typeof handler !== 'string') continue;
    const variables = asRecord(asRecord(resource.Properties.Environment).Variables);
    const environment = Object.fromEntries(
      Object.entries(variables).map(([k, val]) => [k, String(resolve(val, ctx))]),
    );
    // Measured once resolved, as Lambda measures what CloudFormation gives it: a stack whose
    // environment would be refused on deploy fails here too, not first on AWS.
    const refusal = environmentRefusal(environment);
    if (refusal) throw new Error(`function ${id} cannot be created: ${refusal}`);
    const [handlerFile, handlerExport] = handlerFileOf(assemblyDir, assetPath, handler);
    functions.push({
      logicalId: id,
      name: physical.get(id)?.ref ?? id,
      handlerFile,
      handlerExport,
      environment,
      timeoutSeconds: Number(resource.Properties.Timeout ?? 3),
      memoryMb: Number(resource.Properties.MemorySize ?? 128),
      codeSha256: createHash('sha256').update(readFileSync(handlerFile)).digest('base64'),
      lastModified,
      ...(asyncConfigs.has(id) ? { asyncInvoke: asyncConfigs.get(id) } : {}),
    });
  }
  return functions;
};

/**
 * The functions of `next` (another synthesis of the same app) as they would run on `running`'s
 * resources: what a running stack swaps in when only code or function settings changed. Nothing
 * is created; references resolve to the resources already provisioned.
 */
export const functionsOnRunningStack = (
  next: StackTemplate,
  running: ProvisionedStack,
): LocalFunction[] => {
  return functionsOf(
    { ...next, stackName: running.stackName },
    running.region,
    new Map(running.physical),
  );
};
