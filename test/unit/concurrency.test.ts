/**
 * The two ways the code runs work side by side: a bounded pool over items, and a few calls at
 * once. Neither leaves work running when it reports a failure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allSettledOrThrow, mapLimit } from '../../shared/concurrency.ts';

/** A task that yields to the event loop a given number of times, as a request would. */
const yielding = async (turns: number) => {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('mapLimit', () => {
  it('returns every result in item order, never with more than the limit in flight, for any items and limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat({ max: 5 }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 8 }),
        async (turns, limit) => {
          let inFlight = 0;
          let most = 0;
          const results = await mapLimit(turns, limit, async (t) => {
            inFlight++;
            most = Math.max(most, inFlight);
            await yielding(t);
            inFlight--;
            return t * 2;
          });
          expect(results).toEqual(turns.map((t) => t * 2));
          expect(most).toBeLessThanOrEqual(limit);
        },
      ),
    );
  });

  it('stops taking items after a failure and rejects with it once the tasks in flight have ended, for any failing item', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat({ max: 5 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 8 }),
        fc.nat(),
        async (turns, limit, pick) => {
          const failing = pick % turns.length;
          let inFlight = 0;
          let startedAfterFailure = 0;
          let failed = false;
          const outcome = mapLimit(
            turns.map((t, i) => ({ t, i })),
            limit,
            async ({ t, i }) => {
              if (failed) startedAfterFailure++;
              inFlight++;
              await yielding(t);
              inFlight--;
              if (i === failing) {
                failed = true;
                throw new Error(`item ${i}`);
              }
            },
          );
          await expect(outcome).rejects.toThrow(`item ${failing}`);
          expect(inFlight).toBe(0);
          // A failure is seen when its rejection is handled; a worker whose own task ended in
          // the same turn may take one more item before then, and none takes a second.
          expect(startedAfterFailure).toBeLessThan(limit);
        },
      ),
    );
  });
});

describe('allSettledOrThrow', () => {
  it('resolves to every value in the order given when all succeed', async () => {
    const values = await allSettledOrThrow(
      yielding(3).then(() => 'slow'),
      Promise.resolve(2),
    );
    expect(values).toEqual(['slow', 2]);
  });

  it('rejects with the first failure in the order given only after every task has settled', async () => {
    let slowEnded = false;
    const slow = yielding(5).then(() => {
      slowEnded = true;
    });
    const outcome = allSettledOrThrow(
      Promise.reject(new Error('first')),
      slow,
      Promise.reject(new Error('second')),
    );
    await expect(outcome).rejects.toThrow('first');
    expect(slowEnded).toBe(true);
  });
});
