/**
 * Coalescing hour notifications: an hour is published at most once per window, however many
 * batches touch it.
 *
 * With a window of W seconds the aggregate queue is a FIFO queue whose messages are delayed W
 * seconds, grouped by hour, and deduplicated by `<hour>@<slot>`, where the slot is the sender's
 * clock divided into W-second steps. SQS keeps the first notification of a slot and drops the
 * others; the one kept becomes visible W seconds after it was sent, which is after the slot
 * ends, so after every dropped notification of that slot was sent, and so after their batches
 * committed. The aggregator reads the counters once it receives it: nothing dropped is missed.
 *
 * The argument compares times on one sender's clock (within one slot) with SQS's delay; it
 * needs no agreement between clocks, except that two senders must not disagree by more than W
 * on which slot it is (Lambda's clocks are synchronised to well under a millisecond). Even then
 * only freshness suffers: the counters stay exact, and the hour's next notification or a
 * `reconcile` publishes it.
 */

/** The slot of `nowMs` for a window of `windowSeconds` (> 0). */
export const coalescingSlot = (nowMs: number, windowSeconds: number) =>
  Math.floor(nowMs / (windowSeconds * 1000));

/** The FIFO fields of one hour notification: grouped by hour, one message per hour and slot. */
export const hourNotificationFields = (hour: string, nowMs: number, windowSeconds: number) => ({
  groupId: hour,
  deduplicationId: `${hour}@${coalescingSlot(nowMs, windowSeconds)}`,
});
