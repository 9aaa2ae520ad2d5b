import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type PendingEntry, pendingReport } from '../../shared/pending.ts';

const NOW = Date.parse('2026-10-01T12:00:00Z');
const entry = (batchId: string, secondsAgo: number): PendingEntry => ({
  batchId,
  receivedAtMs: NOW - secondsAgo * 1000,
});

describe('the pending watcher’s report', () => {
  it('names the oldest batches first, five at most, and the age of the oldest in whole seconds', () => {
    const entries = [
      entry('b-3', 30),
      entry('b-7', 1),
      entry('b-1', 1200.9),
      entry('b-5', 10),
      entry('b-2', 600),
      entry('b-6', 5),
      entry('b-4', 60),
    ];
    expect(pendingReport(entries, NOW)).toEqual({
      pending: 7,
      oldestAgeSeconds: 1200,
      oldest: [
        entry('b-1', 1200.9),
        entry('b-2', 600),
        entry('b-4', 60),
        entry('b-3', 30),
        entry('b-5', 10),
      ],
    });
  });

  it('reports an age of zero, never a negative one, for a batch received after its clock’s now', () => {
    expect(pendingReport([entry('ahead', -90)], NOW)).toMatchObject({
      pending: 1,
      oldestAgeSeconds: 0,
    });
  });

  it('reports nothing pending when the ledger has no batch in progress', () => {
    expect(pendingReport([], NOW)).toEqual({ pending: 0, oldestAgeSeconds: 0, oldest: [] });
  });

  it('gives the same report whatever order the index returns the batches in, ties included', () => {
    const orders = fc
      .array(fc.integer({ min: 0, max: 20 }), { maxLength: 12 })
      .map((ages) => ages.map((age, i) => entry(`b-${i}`, age)))
      .chain((entries) =>
        fc.tuple(fc.constant(entries), fc.shuffledSubarray(entries, { minLength: entries.length })),
      );
    fc.assert(
      fc.property(orders, ([entries, shuffled]) => {
        expect(pendingReport(shuffled, NOW)).toEqual(pendingReport(entries, NOW));
      }),
    );
  });
});
