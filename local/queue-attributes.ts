/**
 * A queue's CloudFormation properties as SQS's `CreateQueue` attributes: the same names, every
 * value a string, a redrive policy as its JSON. The local provisioner creates the stack's queues
 * with them, and `onceflow check --fix` a queue deleted by hand. Pure.
 */

const SCALARS = new Set([
  'VisibilityTimeout',
  'MessageRetentionPeriod',
  'DelaySeconds',
  'MaximumMessageSize',
  'ReceiveMessageWaitTimeSeconds',
  'FifoQueue',
  'ContentBasedDeduplication',
  'DeduplicationScope',
  'FifoThroughputLimit',
  'SqsManagedSseEnabled',
  'KmsMasterKeyId',
  'KmsDataKeyReusePeriodSeconds',
]);
const POLICIES = new Set(['RedrivePolicy', 'RedriveAllowPolicy']);
/** Properties that are not attributes: the name, given apart, and tags (`TagQueue`). */
const NOT_ATTRIBUTES = new Set(['QueueName', 'Tags']);

/**
 * The attributes of a queue's resolved properties, and the properties that are none of SQS's
 * attributes (which the caller names rather than drops).
 */
export const queueAttributes = (
  properties: Readonly<Record<string, unknown>>,
): { readonly attributes: Record<string, string>; readonly others: string[] } => {
  const attributes: Record<string, string> = {};
  const others: string[] = [];
  for (const [key, value] of Object.entries(properties)) {
    if (value === undefined || NOT_ATTRIBUTES.has(key)) continue;
    if (SCALARS.has(key)) attributes[key] = String(value);
    else if (POLICIES.has(key))
      attributes[key] = typeof value === 'string' ? value : JSON.stringify(value);
    else others.push(key);
  }
  return { attributes, others };
};
