import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { aggregateHour, counterDeltas, sameAggregate } from '../../shared/aggregate.ts';
import { settleOrder } from '../../shared/claims.ts';
import { planBatch } from '../../shared/ingest.ts';
import { compareUtf8 } from '../../shared/order-state.ts';
import { type OrderBatch, validateBatch } from '../../shared/schema.ts';
import { PERMUTATIONS, TIE_IDS } from '../support/bounds.ts';

const parse = (value: unknown): OrderBatch => {
  const result = validateBatch(value);
  if (!result.ok) throw new Error(result.detail);
  return result.batch;
};

const ev = (
  id: string,
  orderId: string,
  eventTime: string,
  status = 'placed',
  amount = '1.00',
  currency = 'USD',
) => ({
  eventId: id,
  orderId,
  customerId: 'C',
  status,
  amount,
  currency,
  eventTime,
});

describe('planning a batch', () => {
  it('settles each order once, its state the newest event (event id breaks ties)', () => {
    const plan = planBatch(
      parse({
        batchId: 'b',
        events: [
          ev('a', '1', '2026-10-01T10:00:00Z', 'paid'),
          ev('b', '1', '2026-10-01T09:00:00Z'),
          ev('c', '2', '2026-10-01T09:00:00Z'),
          ev('d', '2', '2026-10-01T09:00:00Z', 'cancelled'),
        ],
      }),
      { counterShards: 4 },
    );
    expect(plan.orders.map((events) => events.map((e) => e.eventId))).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    const fresh = { newest: undefined, claimOf: () => undefined };
    expect(plan.orders.map((events) => settleOrder(fresh, 'b', events).newState?.eventId)).toEqual([
      'a',
      'd',
    ]);
    expect(plan.hours).toEqual(['2026-10-01T09:00:00Z', '2026-10-01T10:00:00Z']);
    expect(plan.archiveKey).toBe('raw/date=2026-10-01/hour=09/b.json');
  });

  it('splits a batch touching more counter items than one transaction holds into parts', () => {
    const events = Array.from({ length: 250 }, (_, i) =>
      ev(`e${i}`, `o${i}`, new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString()),
    );
    const plan = planBatch(parse({ batchId: 'wide', events }), { counterShards: 4 });
    expect(plan.parts.map((p) => p.length)).toEqual([98, 98, 54]);
    expect(plan.parts.flat().map((d) => d.hour)).toEqual(plan.hours);
  });

  it('gives each (hour, currency) its own counter item, with at most one cell per status', () => {
    const events = ['USD', 'EUR', 'JPY'].flatMap((currency, c) =>
      ['placed', 'paid'].map((status, s) =>
        ev(`e${c}${s}`, `o${c}${s}`, '2026-10-01T09:15:00Z', status, '1', currency),
      ),
    );
    const plan = planBatch(parse({ batchId: 'cur', events }), { counterShards: 4 });
    expect(plan.hours).toEqual(['2026-10-01T09:00:00Z']);
    expect(plan.parts).toHaveLength(1);
    expect(plan.parts[0]?.map((d) => [d.currency, d.cells.map((c) => c.status)])).toEqual([
      ['EUR', ['paid', 'placed']],
      ['JPY', ['paid', 'placed']],
      ['USD', ['paid', 'placed']],
    ]);
  });

  it('keeps every shard index within the configured count and the same for the same batch id', () => {
    const shards = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const plan = planBatch(
        parse({ batchId: `b-${i}`, events: [ev('e', '1', '2026-10-01T09:00:00Z')] }),
        {
          counterShards: 4,
        },
      );
      shards.add(plan.shard);
    }
    expect([...shards].sort()).toEqual([0, 1, 2, 3]);
  });
});

describe('the tie order', () => {
  it('compares ids exactly as their UTF-8 bytes compare, for any Unicode text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        expect(Math.sign(compareUtf8(a, b))).toBe(
          Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('puts a supplementary character above U+E000–U+FFFF, where UTF-16 order disagrees', () => {
    const ids = TIE_IDS;
    expect(compareUtf8(ids[2], ids[1])).toBeGreaterThan(0);
    expect(ids[2] < ids[1]).toBe(true); // JavaScript's own order says the opposite
    for (const order of PERMUTATIONS) {
      const batch = parse({
        batchId: 'tie',
        events: order.map((i) => ev(ids[i] ?? '', 'o', '2026-10-01T09:00:00Z')),
      });
      const fresh = { newest: undefined, claimOf: () => undefined };
      expect(settleOrder(fresh, 'tie', batch.events).newState?.eventId).toBe('e-\u{1F600}');
    }
  });
});

describe('hourly aggregates', () => {
  it('sums counters by status and currency with exact decimals', () => {
    const batch = parse({
      batchId: 'b',
      events: [
        ev('a', '1', '2026-10-01T09:05:00Z', 'placed', '0.10'),
        ev('b', '2', '2026-10-01T09:10:00Z', 'placed', '0.20'),
        ev('c', '3', '2026-10-01T09:15:00Z', 'placed', '5.00', 'EUR'),
        ev('d', '4', '2026-10-01T09:20:00Z', 'paid', '0.70'),
      ],
    });
    const shards = counterDeltas(batch.events).map((d) => ({ updates: 1n, cells: d.cells }));
    expect(aggregateHour('2026-10-01T09:00:00Z', [...shards, ...shards])).toEqual({
      hour: '2026-10-01T09:00:00Z',
      events: 8,
      byStatus: {
        paid: { events: 2, amounts: { USD: '1.40' } },
        placed: { events: 6, amounts: { EUR: '10.00', USD: '0.60' } },
      },
      revision: 4,
    });
  });

  it('renders each currency with its ISO 4217 exponent', () => {
    const batch = parse({
      batchId: 'b',
      events: [
        ev('a', '1', '2026-10-01T09:05:00Z', 'placed', '1500', 'JPY'),
        ev('b', '2', '2026-10-01T09:10:00Z', 'placed', '2.125', 'KWD'),
        ev('c', '3', '2026-10-01T09:15:00Z', 'placed', '25.5', 'USD'),
      ],
    });
    const shards = counterDeltas(batch.events).map((d) => ({ updates: 1n, cells: d.cells }));
    expect(aggregateHour('2026-10-01T09:00:00Z', shards).byStatus).toEqual({
      placed: { events: 3, amounts: { JPY: '1500', KWD: '2.125', USD: '25.50' } },
    });
  });

  it('treats aggregates as equal regardless of key order, and different when the revision moved', () => {
    const a = {
      hour: 'h',
      events: 1,
      byStatus: { paid: { events: 1, amounts: { USD: '1.00' } } },
      revision: 1,
    };
    expect(sameAggregate(a, { ...a })).toBe(true);
    expect(sameAggregate(a, { ...a, revision: 2 })).toBe(false);
  });
});
