/**
 * Settling events against an order's claims, in memory: whatever batches carry an event, in any
 * order and any number of times, it is counted once, by the batch that claimed it, and the
 * order's state is its newest counted event.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type EventClaim, type OrderSnapshot, settleOrder } from '../../shared/claims.ts';
import { KeyedQueue } from '../../shared/concurrency.ts';
import { eventDigest } from '../../shared/digest.ts';
import { isNewer } from '../../shared/order-state.ts';
import { type OrderBatch, type OrderEvent, validateBatch } from '../../shared/schema.ts';

const parse = (value: unknown): OrderBatch => {
  const result = validateBatch(value);
  if (!result.ok) throw new Error(result.detail);
  return result.batch;
};

const event = (id: string, minute: number, amount = '1.00') => ({
  eventId: id,
  orderId: 'o',
  customerId: 'C',
  status: 'placed',
  amount,
  currency: 'USD',
  eventTime: `2026-10-01T09:${String(minute).padStart(2, '0')}:00Z`,
});

/** An order as the store keeps it: its claims and the event its state holds. */
class MemoryOrder {
  readonly claims = new Map<string, EventClaim>();
  newest: OrderEvent | undefined;

  snapshot(): OrderSnapshot {
    return { newest: this.newest, claimOf: (id) => this.claims.get(id) };
  }

  /** Settles and applies the result, as the adapter's single write does. */
  settle(batchId: string, events: readonly OrderEvent[]) {
    const s = settleOrder(this.snapshot(), batchId, events);
    for (const e of s.newClaims) this.claims.set(e.eventId, { batchId, digest: eventDigest(e) });
    if (s.newState) this.newest = s.newState;
    return s;
  }
}

describe('settling an order’s events', () => {
  it('claims new events, recognises its own claims, skips copies and reports conflicts', () => {
    const order = new MemoryOrder();
    const a = parse({ batchId: 'a', events: [event('e1', 1), event('e2', 2)] }).events;
    const first = order.settle('a', a);
    expect(first.newClaims.map((e) => e.eventId)).toEqual(['e1', 'e2']);
    expect(first.newState?.eventId).toBe('e2');
    // A redelivery of the same batch counts the same events again, and writes nothing.
    const again = order.settle('a', a);
    expect(again.ours.map((e) => e.eventId)).toEqual(['e1', 'e2']);
    expect(again.newClaims).toEqual([]);
    expect(again.newState).toBeUndefined();
    // Another batch: a copy of e1 ("1.0" is 1.00), e2 with another amount and a later time.
    const b = parse({
      batchId: 'b',
      events: [event('e1', 1, '1.0'), event('e2', 59, '9.00'), event('e3', 3)],
    }).events;
    const other = order.settle('b', b);
    expect(other.ours.map((e) => e.eventId)).toEqual(['e3']);
    expect(other.duplicates.map((e) => e.eventId)).toEqual(['e1']);
    expect(other.conflicts.map((c) => [c.event.eventId, c.claim.batchId])).toEqual([['e2', 'a']]);
    // The conflicting copy is newer, but never becomes the state: e3 does.
    expect(order.newest?.eventId).toBe('e3');
  });

  it('counts each event once and keeps the newest, whatever batches carry it and in what order', () => {
    const events = parse({
      batchId: 'all',
      events: Array.from({ length: 8 }, (_, i) => event(`e${i}`, (i * 7) % 10)),
    }).events;
    const deliveries = fc.array(
      fc.record({
        batch: fc.integer({ min: 0, max: 5 }),
        picks: fc.subarray([0, 1, 2, 3, 4, 5, 6, 7], { minLength: 1 }),
      }),
      { minLength: 1, maxLength: 20 },
    );
    fc.assert(
      fc.property(deliveries, (list) => {
        const order = new MemoryOrder();
        // A batch id always carries the same events (else it would be a batch conflict).
        const content = new Map<number, number[]>();
        const counted = new Map<string, string>();
        for (const { batch, picks } of list) {
          const chosen = content.get(batch) ?? picks;
          content.set(batch, chosen);
          const s = order.settle(
            `b${batch}`,
            chosen.map((i) => events[i] as OrderEvent),
          );
          for (const e of s.ours) {
            const owner = counted.get(e.eventId);
            expect(owner === undefined || owner === `b${batch}`).toBe(true);
            counted.set(e.eventId, `b${batch}`);
          }
          expect(s.conflicts).toEqual([]);
        }
        const sent = new Set(list.flatMap(({ batch }) => content.get(batch) ?? []));
        expect(counted.size).toBe(sent.size);
        const newest = [...sent]
          .map((i) => events[i] as OrderEvent)
          .reduce((n, e) => (isNewer(e, n) ? e : n));
        expect(order.newest?.eventId).toBe(newest.eventId);
      }),
      { numRuns: 500 },
    );
  });
});

describe('a keyed queue', () => {
  it('runs tasks of one key one after the other, and of different keys together', async () => {
    const queue = new KeyedQueue();
    const log: string[] = [];
    const task = (name: string, gate: Promise<void>) => async () => {
      log.push(`start ${name}`);
      await gate;
      log.push(`end ${name}`);
    };
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const a1 = queue.run('a', task('a1', gate));
    const a2 = queue.run('a', task('a2', Promise.resolve()));
    const b1 = queue.run('b', task('b1', Promise.resolve()));
    await b1;
    expect(log).toEqual(['start a1', 'start b1', 'end b1']);
    open();
    await Promise.all([a1, a2]);
    expect(log).toEqual(['start a1', 'start b1', 'end b1', 'end a1', 'start a2', 'end a2']);
  });

  it('runs the next task of a key after one failed', async () => {
    const queue = new KeyedQueue();
    const failed = queue.run('a', () => Promise.reject(new Error('boom')));
    const next = queue.run('a', async () => 'ran');
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('ran');
  });
});
