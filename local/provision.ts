/**
 * Creates a stack's queues, tables and buckets on the local emulators from its synthesized
 * template — names, queue attributes, redrive policies, key schemas, indexes, TTL — and reads
 * its functions and event source mappings. The template is the only configuration.
 */
import { type CreateTableCommandInput, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import type { SNSClient } from '@aws-sdk/client-sns';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { AwsClients } from '../adapters/clients.ts';
import { type TemplateAlarms, templateAlarms } from './alarms.ts';
import { mappingRefusal, reservationRefusal } from './lambda-quotas.ts';
import { functionsOf, LOCAL_ACCOUNT, type LocalFunction } from './provision-functions.ts';
import { createOrKeepTable, tableInput } from './provision-table.ts';
import { queueAttributes } from './queue-attributes.ts';
import { type LocalSchedule, scheduledRules } from './rules.ts';
import { type LocalSchedulerSchedule, schedulerSchedules } from './scheduler.ts';
import {
  asRecord,
  type PhysicalResource,
  physicalName,
  type ResolveContext,
  type Resource,
  referencesOf,
  resolve,
  type StackTemplate,
} from './template.ts';
import { provisionTopics } from './topics.ts';
import { eventSourceMappings, type LocalEventSourceMapping } from './triggers.ts';

export {
  functionsOnRunningStack,
  LOCAL_ACCOUNT,
  type LocalFunction,
} from './provision-functions.ts';
export type { LocalSchedule } from './rules.ts';
export type { LocalEventSourceMapping } from './triggers.ts';

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
  /** EventBridge Scheduler schedules invoking the stack's functions. */
  readonly schedulerSchedules: readonly LocalSchedulerSchedule[];
  /** The metric alarms, evaluated by the edge against the metrics the runtime publishes. */
  readonly alarms: TemplateAlarms['alarms'];
  /** The stack outputs, resolved: what `cdk deploy` would print. */
  readonly outputs: Readonly<Record<string, string>>;
  /** Resource types that have no local meaning (IAM, alarms, log groups, policies…). */
  readonly notEmulated: readonly string[];
  /**
   * What the runtime does not run, each with the reason: functions it cannot run (another
   * runtime, a container image), what would invoke them, and rules it does not run.
   */
  readonly notRun: readonly string[];
  /** What runs, but differently than on AWS (a layer not mounted, filters not applied). */
  readonly differences: readonly string[];
  /**
   * What runs as on AWS but likely not as meant: a function whose reserved concurrency is below
   * what its SQS mappings may run at once, so that their batches are throttled and their
   * messages can reach the DLQ unprocessed.
   */
  readonly cautions: readonly string[];
  /** What each provisioned resource and function answers to `Ref` and `Fn::GetAtt`. */
  readonly physical: ReadonlyMap<string, PhysicalResource>;
  /** The ARNs of the topics created (alarm topics with their SQS subscriptions). */
  readonly topicArns: readonly string[];
}

const PROVISIONED = new Set([
  'AWS::SQS::Queue',
  'AWS::DynamoDB::Table',
  'AWS::DynamoDB::GlobalTable',
  'AWS::S3::Bucket',
]);

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

export const provisionStack = async (
  stack: StackTemplate,
  /** With `sns`, the template's topics and their SQS subscriptions are created too. */
  clients: AwsClients & { readonly sns?: SNSClient },
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
      const { attributes } = queueAttributes(props);
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

  // Topics once the queues exist (their SQS subscribers), before what may name them.
  const topics = clients.sns
    ? await provisionTopics(entries, {
        stackName,
        sns: clients.sns,
        physical,
        resolveValue: (value) => resolve(value, ctx),
      })
    : undefined;
  const { functions, notRun: functionsNotRun } = functionsOf(stack, region, physical);

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
  // CloudFormation reserves each function's concurrency in turn, refused as PutFunctionConcurrency.
  let reservedSoFar = 0;
  for (const fn of functions) {
    if (fn.reservedConcurrency === undefined) continue;
    const refusal = reservationRefusal(fn.reservedConcurrency, reservedSoFar);
    if (refusal) throw new Error(`function ${fn.logicalId} cannot be created: ${refusal.message}`);
    reservedSoFar += fn.reservedConcurrency;
  }
  const scheduler = schedulerSchedules(
    entries,
    functions.map((f) => f.logicalId),
    { stackName, region, account: LOCAL_ACCOUNT, resolveValue: (value) => resolve(value, ctx) },
  );
  const { alarms, notRun: alarmsNotRun } = templateAlarms(entries, {
    stackName,
    region,
    account: LOCAL_ACCOUNT,
    resolveValue: (value) => resolve(value, ctx),
  });
  const { schedules, notRun: rulesNotRun } = scheduledRules(
    entries,
    functions.map((f) => f.logicalId),
    { stackName, resolveValue: (value) => resolve(value, ctx) },
  );

  // What would run a function that does not run locally runs nothing either: named, not dropped.
  const skipped = new Set(functionsNotRun.map((f) => f.logicalId));
  // Lambda's destinations for asynchronous invocations, as emulated: the stack's queues and functions.
  const localTargets = new Set([...queues.map((q) => q.arn), ...functions.map((f) => f.arn)]);
  const notRun = [
    ...functionsNotRun.map((f) => `${f.logicalId}: ${f.reason}`),
    ...entries.flatMap(([id, r]) => {
      const invokers = [
        'AWS::Lambda::EventSourceMapping',
        'AWS::Events::Rule',
        'AWS::Scheduler::Schedule',
      ];
      if (!invokers.includes(r.Type)) return [];
      const target = referencesOf(r.Properties).find((ref) => skipped.has(ref));
      return target ? [`${id}: it invokes ${target}, which is not run locally`] : [];
    }),
    ...rulesNotRun,
    ...alarmsNotRun,
    ...(topics?.notRun ?? []),
    ...scheduler.notRun,
    ...functions.flatMap((fn) => {
      const targets: [string, string | undefined][] = [
        ['on-success destination', fn.asyncInvoke?.onSuccess],
        ['on-failure destination', fn.asyncInvoke?.onFailure],
        ['dead-letter queue', fn.deadLetterArn],
      ];
      return targets.flatMap(([what, arn]) =>
        arn === undefined || localTargets.has(arn.replace(/:\$LATEST$/, ''))
          ? []
          : [
              `${fn.logicalId}'s ${what} ${arn}: not emulated (the stack's queues and functions are)`,
            ],
      );
    }),
  ];

  // What runs, but not as on AWS: said once at start rather than found out later.
  const run = new Set(functions.map((f) => f.logicalId));
  const differences = [
    ...entries.flatMap(([id, r]) => {
      const layers = r.Properties.Layers;
      return run.has(id) && Array.isArray(layers) && layers.length > 0
        ? [
            `${id}: its ${layers.length === 1 ? 'layer is' : `${layers.length} layers are`} not mounted (what its code loads from /opt is missing locally)`,
          ]
        : [];
    }),
    ...mappings.flatMap((m) =>
      m.filtersNotApplied === undefined
        ? []
        : [
            `${m.logicalId}: its FilterCriteria are not applied, ${m.filtersNotApplied} (every message reaches the function; on AWS, Lambda deletes the messages no filter matches)`,
          ],
    ),
  ];

  // A function's mappings share its reservation: together they may run more than it allows.
  const cautions = functions.flatMap((fn) => {
    const reserved = fn.reservedConcurrency;
    const own = mappings.filter((m) => m.functionLogicalId === fn.logicalId);
    if (reserved === undefined || own.length === 0) return [];
    const unbounded = own.filter((m) => m.maxConcurrency === undefined);
    const most = own.reduce((sum, m) => sum + (m.maxConcurrency ?? 0), 0);
    if (unbounded.length === 0 && most <= reserved) return [];
    const which = `${own.length === 1 ? 'its mapping' : 'its mappings'} ${own.map((m) => m.logicalId).join(' and ')}`;
    const runs =
      unbounded.length > 0
        ? `${which} ${own.length === 1 ? 'has' : unbounded.length === own.length ? 'have' : 'include one with'} no maximum concurrency (Lambda scales its pollers far past that)`
        : `${which} may run ${most} invocations at once${own.length > 1 ? ' between them' : ''}`;
    return [
      `${fn.logicalId} reserves a concurrency of ${reserved}, and ${runs}: batches past ${reserved} are throttled, and a message throttled until its visibility timeout returns to the queue, a receive spent towards the DLQ (AWS advises a maximum concurrency no higher than the reserved concurrency)`,
    ];
  });

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
    'AWS::Scheduler::Schedule',
    'AWS::CloudWatch::Alarm',
    ...(topics ? ['AWS::SNS::Topic', 'AWS::SNS::Subscription'] : []),
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
    schedulerSchedules: scheduler.schedules,
    alarms,
    outputs,
    notEmulated,
    notRun,
    differences,
    cautions,
    physical,
    topicArns: [...(topics?.topics.values() ?? [])],
  };
};
