/**
 * An event source mapping as the local runtime runs it: one of its pollers, seen through
 * Lambda's API (`lambda-mappings-api.ts`) with a UUID, a state and settings of its own.
 */
import { createHash } from 'node:crypto';
import type { LocalMapping } from './lambda-mappings-api.ts';
import type { LocalQueue } from './provision.ts';
import type { SqsPoller } from './sqs-poller.ts';
import type { LocalEventSourceMapping } from './triggers.ts';

/** Stable for the stack and mapping, shaped like Lambda's UUIDs. */
export const mappingUuid = (stackName: string, logicalId: string) => {
  const h = createHash('sha256').update(`${stackName}/${logicalId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
};

/**
 * A template's mapping, run by one of the runtime's pollers. Without a ScalingConfig of its own,
 * the poller runs `defaultConcurrency` slots.
 */
export const pollerMapping = (
  poller: SqsPoller,
  o: {
    readonly stackName: string;
    readonly mapping: LocalEventSourceMapping;
    readonly functionName: string;
    readonly queue: Pick<LocalQueue, 'arn' | 'attributes'>;
    /** The function's timeout now (a redeploy may change it). */
    readonly functionTimeoutSeconds: () => number;
    readonly defaultConcurrency: number;
  },
): LocalMapping => {
  let scaling = o.mapping.maxConcurrency;
  let modifiedAt = Date.now();
  const { VisibilityTimeout = 30, FifoQueue } = o.queue.attributes;
  return {
    logicalId: o.mapping.logicalId,
    uuid: mappingUuid(o.stackName, o.mapping.logicalId),
    functionName: o.functionName,
    queueArn: o.queue.arn,
    limits: () => ({
      queue: { visibilityTimeoutSeconds: Number(VisibilityTimeout), fifo: FifoQueue === 'true' },
      functionTimeoutSeconds: o.functionTimeoutSeconds(),
    }),
    state: () => poller.state,
    // Lambda's LastModified moves with a change and with a state it settles in: Disabled comes
    // once the batches running at the pause have finished.
    lastModified: () =>
      poller.state === 'Disabled' ? Math.max(modifiedAt, poller.disabledAt ?? 0) : modifiedAt,
    settings: () => ({ ...poller.settings, maxConcurrency: scaling }),
    setEnabled: (enabled) => {
      modifiedAt = Date.now();
      if (enabled) poller.resume();
      else poller.pause();
    },
    configure: ({ maxConcurrency, ...rest }) => {
      modifiedAt = Date.now();
      scaling = maxConcurrency;
      poller.configure({ ...rest, maxConcurrency: maxConcurrency ?? o.defaultConcurrency });
    },
  };
};
