/**
 * A queue deleted by hand, for `onceflow check --fix`: created again by its name with the
 * attributes the deployed template gives it, and the policy its `AWS::SQS::QueuePolicy` gives it.
 * Its URL and ARN are then the deleted one's, which the stack's outputs, the functions, the other
 * queue's redrive policy and CloudFormation all name, so they hold. CloudFormation still lists the
 * queue, so no `cdk deploy` creates it again. Pure.
 */
import * as v from 'valibot';
import { queueAttributes } from '../../local/queue-attributes.ts';
import type { Drift, LiveStack } from './check-drifts.ts';
import { QUEUE_OUTPUTS } from './check-rules.ts';
import { referenced, type Template, UNRESOLVED } from './check-template.ts';
import type { QueueFunction } from './logs.ts';

const QueuesSchema = v.array(v.object({ Ref: v.string() }));

/** The policy document the template attaches to queue `id`, or why there is none to give. */
const policyOf = (template: Template, id: string, resolve: (value: unknown) => unknown) => {
  const policies = Object.values(template.Resources).filter((r) => {
    if (r.Type !== 'AWS::SQS::QueuePolicy') return false;
    const queues = v.safeParse(QueuesSchema, r.Properties.Queues);
    return queues.success && queues.output.some((q) => q.Ref === id);
  });
  if (policies.length > 1) return { reason: `${policies.length} queue policies name it` };
  const [policy] = policies;
  if (!policy) return {};
  const document = resolve(policy.Properties.PolicyDocument);
  return document === UNRESOLVED
    ? { reason: 'its queue policy does not resolve through the stack' }
    : { document: JSON.stringify(document) };
};

/** The repair of one deleted queue: the source queue, or its DLQ. */
const deletedQueue = (
  template: Template,
  live: LiveStack,
  resolve: (value: unknown) => unknown,
  o: { readonly subject: string; readonly name: string; readonly output: string },
): Drift => {
  const answers = [{ subject: o.subject, name: o.name }];
  const id = referenced(template, o.output);
  const url = live.outputs[o.output];
  const properties = id === undefined ? undefined : template.Resources[id]?.Properties;
  if (id === undefined || url === undefined || properties === undefined)
    return { answers, unresolvable: `${o.output} names no queue of the template` };
  const resolved = v.safeParse(v.record(v.string(), v.unknown()), resolve(properties));
  if (!resolved.success)
    return { answers, unresolvable: `queue ${id}'s properties do not resolve through the stack` };
  const { attributes, others } = queueAttributes(resolved.output);
  if (others.length > 0)
    return {
      answers,
      unresolvable: `queue ${id} has settings not re-created here (${others.join(', ')})`,
    };
  const policy = policyOf(template, id, resolve);
  if (policy.reason) return { answers, unresolvable: `queue ${id}: ${policy.reason}` };
  const queueName = url.slice(url.lastIndexOf('/') + 1);
  return {
    answers,
    repair: {
      subject: o.subject,
      name: o.name,
      change: `create ${queueName} again with the template's ${Object.keys(attributes).length} attributes${policy.document ? ' and its policy' : ''}`,
      request: {
        kind: 'create-queue',
        queueName,
        attributes: { ...attributes, ...(policy.document ? { Policy: policy.document } : {}) },
      },
    },
  };
};

/** The queue-fed function `fn`'s queue and DLQ, each created again when it was deleted by hand. */
export const deletedQueueDrifts = (
  template: Template,
  live: LiveStack,
  resolve: (value: unknown) => unknown,
  fn: QueueFunction,
): Drift[] => {
  const o = QUEUE_OUTPUTS[fn];
  const facts = live.queues[fn];
  // The DLQ first: SQS refuses a redrive policy whose dead-letter queue does not exist.
  return [
    ...(facts.dlqMissing
      ? [
          deletedQueue(template, live, resolve, {
            subject: o.name,
            name: 'dead-letter queue',
            output: o.dlq,
          }),
        ]
      : []),
    ...(facts.queueMissing
      ? [deletedQueue(template, live, resolve, { subject: o.name, name: 'queue', output: o.queue })]
      : []),
  ];
};
