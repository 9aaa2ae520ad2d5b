/**
 * A template's SNS topics and their SQS subscriptions, created in fauxqs as CloudFormation
 * creates them: a topic named `<stack>-<logicalId>` unless the template names it, so its ARN is
 * the one the stack's alarms name in their actions. fauxqs delivers to SQS subscribers only: a
 * subscription by email, HTTP or Lambda is named at start as not delivered.
 */
import { CreateTopicCommand, type SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import * as v from 'valibot';
import { asRecord, type PhysicalResource, physicalName, type ResourceEntries } from './template.ts';

const SubscriptionSchema = v.object({
  TopicArn: v.string(),
  Protocol: v.string(),
  Endpoint: v.optional(v.string()),
  RawMessageDelivery: v.optional(v.union([v.boolean(), v.string()])),
  FilterPolicy: v.optional(v.unknown()),
  FilterPolicyScope: v.optional(v.string()),
});

export interface LocalTopics {
  /** Each topic's ARN by logical id. */
  readonly topics: ReadonlyMap<string, string>;
  /** Subscriptions fauxqs does not deliver, each with the reason. */
  readonly notRun: string[];
}

/**
 * Creates the topics (recording each in `physical`, so that `Ref` gives its ARN), then their
 * SQS subscriptions. A subscription is resolved after its topic and queue exist.
 */
export const provisionTopics = async (
  resources: ResourceEntries,
  options: {
    readonly stackName: string;
    readonly sns: SNSClient;
    readonly physical: Map<string, PhysicalResource>;
    readonly resolveValue: (value: unknown) => unknown;
  },
): Promise<LocalTopics> => {
  const topics = new Map<string, string>();
  for (const [id, resource] of resources.filter(([, r]) => r.Type === 'AWS::SNS::Topic')) {
    // Only what names the topic: its key (KMS) and policies are not emulated.
    const declared = asRecord(resource.Properties);
    const p = asRecord(
      options.resolveValue({ TopicName: declared.TopicName, FifoTopic: declared.FifoTopic }),
    );
    const fifo = p.FifoTopic === true || p.FifoTopic === 'true';
    const name =
      typeof p.TopicName === 'string'
        ? p.TopicName
        : `${physicalName(options.stackName, id, fifo ? 251 : 256)}${fifo ? '.fifo' : ''}`;
    const { TopicArn = '' } = await options.sns.send(
      new CreateTopicCommand({
        Name: name,
        ...(fifo ? { Attributes: { FifoTopic: 'true' } } : {}),
      }),
    );
    topics.set(id, TopicArn);
    options.physical.set(id, { ref: TopicArn, attributes: { TopicArn, TopicName: name } });
  }
  const notRun: string[] = [];
  for (const [id, resource] of resources.filter(([, r]) => r.Type === 'AWS::SNS::Subscription')) {
    const parsed = v.safeParse(SubscriptionSchema, options.resolveValue(resource.Properties));
    if (!parsed.success) {
      notRun.push(`${id}: a subscription whose properties do not resolve locally`);
      continue;
    }
    const s = parsed.output;
    if (s.Protocol !== 'sqs') {
      notRun.push(
        `${id}: its ${s.Protocol} subscriber is not delivered to (only SQS subscribers are, locally)`,
      );
      continue;
    }
    const attributes: Record<string, string> = {};
    if (s.RawMessageDelivery !== undefined)
      attributes.RawMessageDelivery = String(s.RawMessageDelivery);
    if (s.FilterPolicy !== undefined)
      attributes.FilterPolicy =
        typeof s.FilterPolicy === 'string' ? s.FilterPolicy : JSON.stringify(s.FilterPolicy);
    if (s.FilterPolicyScope !== undefined) attributes.FilterPolicyScope = s.FilterPolicyScope;
    await options.sns.send(
      new SubscribeCommand({
        TopicArn: s.TopicArn,
        Protocol: 'sqs',
        Endpoint: s.Endpoint,
        Attributes: attributes,
        ReturnSubscriptionArn: true,
      }),
    );
  }
  return { topics, notRun };
};
