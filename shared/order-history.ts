/**
 * An order's history, read back from the claims on its events and the archived batches that
 * made them (`onceflow orders --order-id <id> --events`): the operator's answer to "why does this
 * order show this state?". Each event the order counts is listed once, with the batch that
 * counts it, in newest-wins order, so the last one listed is the one the state holds. Pure.
 */
import type { EventClaim } from './claims.ts';
import { eventDigest } from './digest.ts';
import { compareUtf8 } from './order-state.ts';
import type { OrderEvent } from './schema.ts';

/** One event an order counts, as the batch that claimed it first carried it. */
export interface HistoryEvent {
  readonly eventId: string;
  readonly eventTime: string;
  readonly status: string;
  readonly amount: string;
  readonly currency: string;
  readonly customerId: string;
  /** The batch whose claim counts the event. */
  readonly batchId: string;
  /** The event the order's state holds. */
  readonly current: boolean;
}

/** A claiming batch whose events cannot be named: its archive is gone or unreadable. */
export interface UnreadBatch {
  readonly batchId: string;
  /** How many of the order's claims it holds. */
  readonly claims: number;
  readonly reason: string;
}

export interface OrderHistory {
  /** Oldest first by (event time, event id), the order newest-wins compares them in. */
  readonly events: readonly HistoryEvent[];
  readonly unread: readonly UnreadBatch[];
}

/** A batch that claims some of the order's events, and its events as archived. */
export interface ClaimingBatch {
  readonly batchId: string;
  /** Its archived events; undefined when they cannot be read, for `reason`. */
  readonly events: readonly OrderEvent[] | undefined;
  readonly reason?: string;
}

export const orderHistory = (o: {
  readonly orderId: string;
  /** The event id the order's state holds (undefined: no state). */
  readonly stateEventId: string | undefined;
  /** Every claim on the order's events, as stored now. */
  readonly claims: readonly EventClaim[];
  /** The claim on one of the order's events. */
  readonly claimOf: (eventId: string) => EventClaim | undefined;
  readonly batches: readonly ClaimingBatch[];
}): OrderHistory => {
  const events = new Map<string, OrderEvent & { batchId: string }>();
  const unread: UnreadBatch[] = [];
  for (const batch of o.batches) {
    if (!batch.events) {
      unread.push({
        batchId: batch.batchId,
        claims: o.claims.filter((c) => c.batchId === batch.batchId).length,
        reason: batch.reason ?? 'its archived events cannot be read',
      });
      continue;
    }
    for (const event of batch.events) {
      if (event.orderId !== o.orderId || events.has(event.eventId)) continue;
      // Counted from this batch only if its claim names the batch and this very content: a copy
      // in another batch is a duplicate, other content under the id a conflict.
      const claim = o.claimOf(event.eventId);
      if (claim?.batchId === batch.batchId && claim.digest === eventDigest(event))
        events.set(event.eventId, { ...event, batchId: batch.batchId });
    }
    // Claims its archive does not back (an archive replaced by hand, say): counted, not shown.
    const shown = [...events.values()].filter((e) => e.batchId === batch.batchId).length;
    const unbacked = o.claims.filter((c) => c.batchId === batch.batchId).length - shown;
    if (unbacked > 0)
      unread.push({
        batchId: batch.batchId,
        claims: unbacked,
        reason: 'its archive does not hold the events as claimed',
      });
  }
  const ordered = [...events.values()].sort((a, b) =>
    a.instant === b.instant ? compareUtf8(a.eventId, b.eventId) : a.instant < b.instant ? -1 : 1,
  );
  return {
    events: ordered.map((e) => ({
      eventId: e.eventId,
      eventTime: e.eventTime,
      status: e.status,
      amount: e.amount,
      currency: e.currency,
      customerId: e.customerId,
      batchId: e.batchId,
      current: e.eventId === o.stateEventId,
    })),
    unread,
  };
};
