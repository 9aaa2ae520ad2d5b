/**
 * A FIFO `ReceiveMessage` returns as many messages of one message group as it can, in order, up
 * to `MaxNumberOfMessages` (SQS's developer guide: "Amazon SQS first attempts to return as many
 * messages with the same message group ID as possible"), and no message of a group that already
 * has one in flight. fauxqs 2.4.1 takes one message per group per receive: its receive loop stops
 * at a group's first message. Locally the aggregate trigger then never sees two notifications of
 * one hour in a batch, which on AWS it does after a backlog, and the poller's rule for a group that
 * failed in an earlier part of a receive is never reached.
 *
 * This gap-filler wraps fauxqs's FIFO dequeue, after a probe shows the gap, and only then: it
 * dequeues one message at a time while the receive has room, each time hiding the group locks
 * this receive took (never those of messages already in flight), so that a group's next message
 * comes out next, as many as SQS would give; the locks are restored, one per message taken, as
 * fauxqs counts them. The DLQ moves, receive counts and persistence stay fauxqs's own. With
 * several messages of a group in flight, those whose visibility ends return in the order they
 * were sent. It reaches the queue class by fauxqs's own module URL (`fauxqs-modules.ts`), and the
 * edge confirms it with a real receive.
 */

import { fauxqsModule } from './fauxqs-modules.ts';

/**
 * What the wrappers use of fauxqs's queue: its FIFO dequeue, the locks it keeps per group, each
 * group's waiting messages, and the two ways a message in flight returns to its group.
 */
interface FauxqsQueue {
  dequeueFifo(maxCount: number, ...rest: unknown[]): unknown[];
  changeVisibility(...args: unknown[]): unknown;
  processTimers(...args: unknown[]): unknown;
  fifoLockedGroups: Map<string, number>;
  fifoMessages: Map<string, { sequenceNumber?: string }[]>;
  attributes: Record<string, string | undefined>;
}

interface FauxqsQueueClass {
  prototype: FauxqsQueue;
}

/** SQS's most messages per receive. */
const MAX_MESSAGES_PER_RECEIVE = 10;

const WRAPPED = Symbol.for('onceflow.fifoGroupReceives');

/** fauxqs's queue class; undefined when its module layout changed. */
const fauxqsQueueClass = async (): Promise<FauxqsQueueClass | undefined> => {
  try {
    // The module fauxqs's stores create their queues from.
    const store = await fauxqsModule<{ SqsQueue?: FauxqsQueueClass }>('./dist/sqs/sqsStore.js');
    const proto = store.SqsQueue?.prototype;
    return typeof proto?.dequeueFifo === 'function' &&
      typeof proto.changeVisibility === 'function' &&
      typeof proto.processTimers === 'function'
      ? store.SqsQueue
      : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Puts each group's waiting messages back in the order they were sent. fauxqs returns a message
 * whose visibility ended to the front of its group, right for the one message in flight it
 * allowed per group; with several in flight, they come back one by one, the last at the front.
 */
const restoreSendOrder = (queue: FauxqsQueue) => {
  for (const messages of queue.fifoMessages.values()) {
    const sent = (i: number) => messages[i]?.sequenceNumber ?? '';
    let ordered = true;
    for (let i = 1; i < messages.length && ordered; i++) ordered = sent(i - 1) <= sent(i);
    // Sequence numbers are zero-padded, so text order is numeric order.
    if (!ordered)
      messages.sort((a, b) => (a.sequenceNumber ?? '').localeCompare(b.sequenceNumber ?? ''));
  }
};

/**
 * Wraps fauxqs's FIFO dequeue so that a receive takes whole runs of a group (see above); returns
 * whether it is wrapped (false: fauxqs's layout is not the expected one). Wrapping twice is a no-op.
 */
export const receiveWholeGroups = async (): Promise<boolean> => {
  const queueClass = await fauxqsQueueClass();
  if (!queueClass) return false;
  const proto = queueClass.prototype as FauxqsQueue & { [WRAPPED]?: true };
  if (proto[WRAPPED]) return true;
  const dequeueOnce = proto.dequeueFifo;
  proto.dequeueFifo = function (this: FauxqsQueue, maxCount: number, ...rest: unknown[]) {
    // Received with no visibility timeout, a message is visible again at once: a second take
    // in the same receive would give it twice. Such a receive stays fauxqs's own.
    const visibility = rest[0] ?? this.attributes.VisibilityTimeout;
    if (!(Number(visibility) > 0)) return dequeueOnce.call(this, maxCount, ...rest);
    const room = Math.min(maxCount, MAX_MESSAGES_PER_RECEIVE);
    const lockedBefore = new Set(this.fifoLockedGroups.keys());
    const received: unknown[] = [];
    // Locks this receive took: hidden while it dequeues again, restored after.
    const taken = new Map<string, number>();
    try {
      while (received.length < room) {
        for (const [group, count] of this.fifoLockedGroups) {
          if (lockedBefore.has(group)) continue;
          taken.set(group, (taken.get(group) ?? 0) + count);
          this.fifoLockedGroups.delete(group);
        }
        // One at a time: fauxqs takes from the first group with a message free, which stays the
        // group just taken from until it has no more, so a group's run comes out whole first.
        const next = dequeueOnce.call(this, 1, ...rest);
        if (next.length === 0) break;
        received.push(...next);
      }
    } finally {
      for (const [group, count] of taken)
        this.fifoLockedGroups.set(group, (this.fifoLockedGroups.get(group) ?? 0) + count);
    }
    return received;
  };
  for (const method of ['changeVisibility', 'processTimers'] as const) {
    const returnToGroups = proto[method];
    proto[method] = function (this: FauxqsQueue, ...args: unknown[]) {
      const result = returnToGroups.apply(this, args);
      restoreSendOrder(this);
      return result;
    };
  }
  proto[WRAPPED] = true;
  return true;
};
