/**
 * Per-event exactly-once. An event is identified by (orderId, eventId); the first batch to apply
 * it claims it, and only the claiming batch counts it. Claims live with the order they belong
 * to and are written in the same atomic write as the order's newest-wins state, so an event
 * takes part in newest-wins exactly when it is claimed, and claims are never changed once made:
 * the set of events a batch claimed is fixed as soon as each of its orders has been settled,
 * whatever crashes, twins or re-batched copies came in between.
 */
import { eventDigest } from './digest.ts';
import { isNewer } from './order-state.ts';
import type { OrderEvent } from './schema.ts';

/** Who claimed an event, and the digest of the content they claimed it with. */
export interface EventClaim {
  readonly batchId: string;
  readonly digest: string;
}

/** What settling needs to know of an order as it is stored. */
export interface OrderSnapshot {
  /** The event the order's state holds; undefined for an order not seen before. */
  readonly newest: Pick<OrderEvent, 'instant' | 'eventId'> | undefined;
  /** The claim on one of the order's events, if it was ever claimed. */
  claimOf(eventId: string): EventClaim | undefined;
}

/** The same (orderId, eventId) sent again with other content: the first content stands. */
export interface EventConflict {
  readonly event: OrderEvent;
  readonly claim: EventClaim;
}

export interface Settlement {
  /** The events this batch counts: claimed now, or by an earlier delivery of this batch. */
  readonly ours: readonly OrderEvent[];
  /** The claims to add (those of `ours` not claimed yet). */
  readonly newClaims: readonly OrderEvent[];
  /** Events with the same content already claimed by another batch: skipped. */
  readonly duplicates: readonly OrderEvent[];
  /** Events claimed by another batch with other content: skipped and reported. */
  readonly conflicts: readonly EventConflict[];
  /** The order's new state, when the newest of `ours` is newer than what it holds. */
  readonly newState: OrderEvent | undefined;
}

/**
 * Settles one order's events of a batch against the order as stored. Pure: the adapter writes
 * the result with a condition on the version it read, and settles again if that lost a race.
 */
export const settleOrder = (
  snapshot: OrderSnapshot,
  batchId: string,
  events: readonly OrderEvent[],
): Settlement => {
  const ours: OrderEvent[] = [];
  const newClaims: OrderEvent[] = [];
  const duplicates: OrderEvent[] = [];
  const conflicts: EventConflict[] = [];
  for (const event of events) {
    const digest = eventDigest(event);
    const claim = snapshot.claimOf(event.eventId);
    if (claim === undefined) {
      ours.push(event);
      newClaims.push(event);
    } else if (claim.digest !== digest) conflicts.push({ event, claim });
    else if (claim.batchId === batchId) ours.push(event);
    else duplicates.push(event);
  }
  // Our events already claimed by an earlier delivery took part in newest-wins then; offering
  // them again is harmless (an equal event is never newer), so the newest of all ours is taken.
  let newest: OrderEvent | undefined;
  for (const event of ours) if (!newest || isNewer(event, newest)) newest = event;
  const newState =
    newest && (!snapshot.newest || isNewer(newest, snapshot.newest)) ? newest : undefined;
  return { ours, newClaims, duplicates, conflicts, newState };
};

/** A batch's events grouped by order, orders sorted by id: one settle (one write) per order. */
export const eventsByOrder = (events: readonly OrderEvent[]): OrderEvent[][] => {
  const byOrder = new Map<string, OrderEvent[]>();
  for (const event of events) {
    const list = byOrder.get(event.orderId) ?? [];
    list.push(event);
    byOrder.set(event.orderId, list);
  }
  return [...byOrder.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, list]) => list);
};
