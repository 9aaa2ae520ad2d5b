/**
 * Reading back what became of a batch's events (`onceflow batch`): the fate each event is given
 * agrees with what settling did, whatever batches carried it and in whatever order they came.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { batchState, type ClaimReader, eventFates, fateCounts } from '../../shared/batch-report.ts';
import { type EventClaim, eventsByOrder, settleOrder } from '../../shared/claims.ts';
import { eventDigest } from '../../shared/digest.ts';
import type { LedgerEntry } from '../../shared/ingest.ts';
import { type OrderEvent, validateBatch } from '../../shared/schema.ts';

const events = (batchId: string, raw: readonly Record<string, string>[]): OrderEvent[] => {
  const result = validateBatch({ batchId, events: raw });
  if (!result.ok) throw new Error(result.detail);
  return [...result.batch.events];
};

const raw = (eventId: string, orderId: string, hour: number, amount = '1.00') => ({
  eventId,
  orderId,
  customerId: 'C',
  status: 'placed',
  amount,
  currency: 'USD',
  eventTime: `2026-10-01T${String(hour).padStart(2, '0')}:15:00Z`,
});

/** Claims as the order items keep them, settled in memory as the adapter's writes do. */
class MemoryClaims {
  readonly #claims = new Map<string, Map<string, EventClaim>>();

  settle(batchId: string, batch: readonly OrderEvent[]) {
    for (const order of eventsByOrder(batch)) {
      const orderId = order[0]?.orderId ?? '';
      const claims = this.#claims.get(orderId) ?? new Map<string, EventClaim>();
      const s = settleOrder({ newest: undefined, claimOf: (id) => claims.get(id) }, batchId, order);
      for (const e of s.newClaims) claims.set(e.eventId, { batchId, digest: eventDigest(e) });
      this.#claims.set(orderId, claims);
    }
  }

  readonly reader: ClaimReader = (orderId, eventId) => this.#claims.get(orderId)?.get(eventId);
}

const entry = (parts: number, done: number[]): LedgerEntry => ({
  digest: 'd',
  parts,
  doneParts: new Set(done),
  archiveKey: 'k',
  receivedAtMs: 0,
  lateHours: undefined,
});

describe('the fate of a batch’s events', () => {
  it('names counted, duplicate, conflict and unclaimed events, and the batch that claimed each', () => {
    const claims = new MemoryClaims();
    claims.settle('a', events('a', [raw('e1', 'o1', 9), raw('e2', 'o1', 9)]));
    // b: a copy of e1 ("1.0" is 1.00), e2 with other content, e3 new; b is applied.
    const b = events('b', [
      raw('e1', 'o1', 9, '1.0'),
      raw('e2', 'o1', 9, '2.00'),
      raw('e3', 'o2', 9),
    ]);
    claims.settle('b', b);
    // c: e4 not settled yet (a batch still pending), and e3 again.
    const c = events('c', [raw('e4', 'o3', 9), raw('e3', 'o2', 9)]);

    expect(eventFates('b', b, claims.reader, undefined)).toEqual([
      {
        orderId: 'o1',
        eventId: 'e1',
        eventTime: '2026-10-01T09:15:00Z',
        fate: 'duplicate',
        claimedBy: 'a',
      },
      {
        orderId: 'o1',
        eventId: 'e2',
        eventTime: '2026-10-01T09:15:00Z',
        fate: 'conflict',
        claimedBy: 'a',
      },
      { orderId: 'o2', eventId: 'e3', eventTime: '2026-10-01T09:15:00Z', fate: 'counted' },
    ]);
    const fates = eventFates('c', c, claims.reader, undefined);
    expect(fates.map((f) => [f.eventId, f.fate, f.claimedBy])).toEqual([
      ['e4', 'unclaimed', undefined],
      ['e3', 'duplicate', 'b'],
    ]);
    expect(fateCounts(fates)).toEqual({
      counted: 0,
      duplicate: 1,
      conflict: 0,
      'too-late': 0,
      unclaimed: 1,
    });
  });

  it('calls the events of a refused hour too late, naming the batch that counts them since', () => {
    const claims = new MemoryClaims();
    const batch = events('a', [raw('e1', 'o1', 8), raw('e2', 'o1', 9), raw('e3', 'o2', 9)]);
    // Hour 09 was closed on arrival: only hour 08 was settled.
    claims.settle('a', batch.slice(0, 1));
    // The refused part re-sent later under an id of its own (`replay rejects`) for e2 only.
    claims.settle('late-1', batch.slice(1, 2));
    const late = new Set(['2026-10-01T09:00:00Z']);
    expect(
      eventFates('a', batch, claims.reader, late).map((f) => [f.eventId, f.fate, f.claimedBy]),
    ).toEqual([
      ['e1', 'counted', undefined],
      ['e2', 'too-late', 'late-1'],
      ['e3', 'too-late', undefined],
    ]);
  });

  it('calls a batch applied once every part is committed, pending before', () => {
    expect(batchState(entry(1, [0]))).toBe('applied');
    expect(batchState(entry(3, [0, 2]))).toBe('pending');
    expect(batchState(entry(2, []))).toBe('pending');
  });

  it('finds each event counted by exactly one batch, the first to carry it, and every other copy a duplicate or conflict naming it, in any delivery order', () => {
    const ids = fc.record({
      order: fc.constantFrom('o1', 'o2', 'o3'),
      event: fc.constantFrom('e1', 'e2', 'e3', 'e4'),
      amount: fc.constantFrom('1.00', '2.00'),
    });
    const batches = fc.array(
      fc.uniqueArray(ids, { minLength: 1, maxLength: 6, selector: (e) => e.event }),
      { minLength: 1, maxLength: 6 },
    );
    fc.assert(
      fc.property(batches, fc.array(fc.nat(5), { maxLength: 10 }), (contents, redeliveries) => {
        const parsed = contents.map((list, i) =>
          events(
            `b${i}`,
            list.map((e) => raw(e.event, e.order, 9, e.amount)),
          ),
        );
        const claims = new MemoryClaims();
        const first = new Map<string, { batchId: string; digest: string }>();
        // Each batch once in its order, then redeliveries of any of them: nothing changes.
        for (const [i, batch] of parsed.entries()) {
          claims.settle(`b${i}`, batch);
          for (const e of batch) {
            const key = `${e.orderId}/${e.eventId}`;
            if (!first.has(key)) first.set(key, { batchId: `b${i}`, digest: eventDigest(e) });
          }
        }
        for (const r of redeliveries) {
          const batch = parsed[r % parsed.length];
          if (batch) claims.settle(`b${r % parsed.length}`, batch);
        }

        let countedInAll = 0;
        for (const [i, batch] of parsed.entries()) {
          for (const report of eventFates(`b${i}`, batch, claims.reader, undefined)) {
            const claim = first.get(`${report.orderId}/${report.eventId}`);
            const event = batch.find(
              (e) => e.eventId === report.eventId && e.orderId === report.orderId,
            );
            if (!claim || !event) throw new Error('an event the batch does not hold');
            if (claim.batchId === `b${i}`) {
              expect(report).toMatchObject({ fate: 'counted' });
              expect(report.claimedBy).toBeUndefined();
              countedInAll += 1;
            } else {
              const fate = claim.digest === eventDigest(event) ? 'duplicate' : 'conflict';
              expect(report).toMatchObject({ fate, claimedBy: claim.batchId });
            }
          }
        }
        expect(countedInAll).toBe(first.size);
      }),
    );
  });
});
