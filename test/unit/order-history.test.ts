/**
 * An order's history read back from its claims and the claiming batches' archived events: each
 * counted event once, with the batch that counts it, oldest first, ending on the state's event.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type EventClaim, settleOrder } from '../../shared/claims.ts';
import { eventDigest } from '../../shared/digest.ts';
import { orderHistory } from '../../shared/order-history.ts';
import { type OrderBatch, type OrderEvent, validateBatch } from '../../shared/schema.ts';

const parse = (value: unknown): OrderBatch => {
  const result = validateBatch(value);
  if (!result.ok) throw new Error(result.detail);
  return result.batch;
};

const event = (id: string, minute: number, o: { amount?: string; orderId?: string } = {}) => ({
  eventId: id,
  orderId: o.orderId ?? 'o',
  customerId: 'C',
  status: 'placed',
  amount: o.amount ?? '1.00',
  currency: 'USD',
  eventTime: `2026-10-01T09:${String(minute).padStart(2, '0')}:00Z`,
});

/** An order as the store keeps it, settled batch by batch as the adapter's one write does. */
const settleAll = (batches: readonly OrderBatch[]) => {
  const claims = new Map<string, EventClaim>();
  let newest: OrderEvent | undefined;
  for (const batch of batches) {
    const mine = batch.events.filter((e) => e.orderId === 'o');
    if (mine.length === 0) continue;
    const s = settleOrder({ newest, claimOf: (id) => claims.get(id) }, batch.batchId, mine);
    for (const e of s.newClaims)
      claims.set(e.eventId, { batchId: batch.batchId, digest: eventDigest(e) });
    if (s.newState) newest = s.newState;
  }
  return { claims, newest };
};

const historyOf = (batches: readonly OrderBatch[], unreadable: ReadonlySet<string> = new Set()) => {
  const { claims, newest } = settleAll(batches);
  const claiming = new Set([...claims.values()].map((c) => c.batchId));
  return orderHistory({
    orderId: 'o',
    stateEventId: newest?.eventId,
    claims: [...claims.values()],
    claimOf: (id) => claims.get(id),
    batches: batches
      .filter((b) => claiming.has(b.batchId))
      .map((b) =>
        unreadable.has(b.batchId)
          ? { batchId: b.batchId, events: undefined, reason: 'its archive is missing' }
          : { batchId: b.batchId, events: b.events },
      ),
  });
};

describe('an order’s history', () => {
  it('lists each counted event once with the batch that counts it, ending on the state', () => {
    const a = parse({ batchId: 'a', events: [event('e2', 20), event('x', 5, { orderId: 'p' })] });
    // A copy of e2 (counted by a), e1 with other content later on (a conflict), and e3.
    const b = parse({
      batchId: 'b',
      events: [event('e2', 20, { amount: '1.0' }), event('e3', 30), event('e1', 10)],
    });
    const c = parse({ batchId: 'c', events: [event('e1', 10, { amount: '7.00' })] });
    expect(historyOf([a, b, c])).toEqual({
      events: [
        expect.objectContaining({ eventId: 'e1', batchId: 'b', amount: '1.00', current: false }),
        expect.objectContaining({ eventId: 'e2', batchId: 'a', amount: '1.00', current: false }),
        expect.objectContaining({ eventId: 'e3', batchId: 'b', current: true }),
      ],
      unread: [],
    });
  });

  it('names a claiming batch whose archive cannot be read, with the claims it holds', () => {
    const a = parse({ batchId: 'a', events: [event('e1', 1), event('e2', 2)] });
    const b = parse({ batchId: 'b', events: [event('e3', 3)] });
    expect(historyOf([a, b], new Set(['a']))).toEqual({
      events: [expect.objectContaining({ eventId: 'e3', batchId: 'b', current: true })],
      unread: [{ batchId: 'a', claims: 2, reason: 'its archive is missing' }],
    });
  });

  it('names a claiming batch whose archive holds other content than it claimed, with the claims it does not back', () => {
    const a = parse({ batchId: 'a', events: [event('e1', 1), event('e2', 2)] });
    const { claims, newest } = settleAll([a]);
    // The archive as found: e2 with another amount (replaced by hand, say).
    const archived = parse({
      batchId: 'a',
      events: [event('e1', 1), event('e2', 2, { amount: '9.00' })],
    });
    expect(
      orderHistory({
        orderId: 'o',
        stateEventId: newest?.eventId,
        claims: [...claims.values()],
        claimOf: (id) => claims.get(id),
        batches: [{ batchId: 'a', events: archived.events }],
      }),
    ).toEqual({
      events: [expect.objectContaining({ eventId: 'e1', batchId: 'a', amount: '1.00' })],
      unread: [
        { batchId: 'a', claims: 1, reason: 'its archive does not hold the events as claimed' },
      ],
    });
  });

  it('lists every event counted, once, ending on the state, whatever batches carried them and in what order', () => {
    // Ten events of the order, a second content for some, tied times for others.
    const ids = Array.from({ length: 10 }, (_, i) => `e${i}`);
    const delivery = fc.record({
      picks: fc.subarray(ids, { minLength: 1 }),
      otherContent: fc.subarray(ids),
    });
    fc.assert(
      fc.property(fc.array(delivery, { minLength: 1, maxLength: 12 }), (deliveries) => {
        const batches = deliveries.map(({ picks, otherContent }, n) =>
          parse({
            batchId: `b${n}`,
            events: picks.map((id) =>
              event(id, Number(id.slice(1)) % 4, {
                amount: otherContent.includes(id) ? '2.00' : '1.00',
              }),
            ),
          }),
        );
        const { claims, newest } = settleAll(batches);
        const history = historyOf(batches);
        expect(history.unread).toEqual([]);
        // Each claimed event once, from the batch that claimed it, with the content it claimed.
        expect(history.events.map((e) => [e.eventId, e.batchId]).sort()).toEqual(
          [...claims.entries()].map(([id, c]) => [id, c.batchId]).sort(),
        );
        for (const e of history.events) {
          const batch = batches.find((b) => b.batchId === e.batchId);
          const claimed = batch?.events.find((x) => x.eventId === e.eventId);
          expect(claimed && eventDigest(claimed)).toBe(claims.get(e.eventId)?.digest);
        }
        // Oldest first; the last is the one the state holds, and only it is current.
        expect(history.events.at(-1)?.eventId).toBe(newest?.eventId);
        expect(history.events.filter((e) => e.current).map((e) => e.eventId)).toEqual([
          newest?.eventId,
        ]);
      }),
      { numRuns: 300 },
    );
  });
});
