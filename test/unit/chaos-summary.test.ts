/**
 * A chaos run's summary, folded from its schedules' results: `onceflow chaos` exits 1 on its
 * mismatches, so one schedule's mismatch must survive any number of clean schedules after it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CRASH_POINTS,
  exitOf,
  foldSchedules,
  type ScheduleResult,
  summaryOf,
} from '../../harness/chaos.ts';

const count = fc.integer({ min: 0, max: 5 });

const resultArb: fc.Arbitrary<ScheduleResult> = fc
  .record({
    seed: fc.nat(),
    events: fc.integer({ min: 1, max: 50 }),
    lost: count,
    doubleCounted: count,
    staleOverwrites: count,
    mismatches: count,
    crashPoints: fc.subarray([...CRASH_POINTS]),
    s3Conflicts: count,
    transactionConflicts: count,
    staleReads: count,
    entryFailures: count,
    partialReads: count,
    shortPages: count,
    wide: fc.boolean(),
    resentEvents: count,
    eventConflicts: count,
    restored: fc.boolean(),
    latePolicy: fc.constantFrom('amend' as const, 'quarantine' as const),
    lateEvents: fc.boolean(),
    finalizedHours: count,
    amendedHours: count,
    tooLate: count,
    versionsRead: count,
  })
  // A schedule with a mismatch says what it was.
  .map((r) => (r.mismatches > 0 ? { ...r, diff: `${r.mismatches} differences` } : r));

const total = (results: readonly ScheduleResult[], figure: (r: ScheduleResult) => number) =>
  results.reduce((s, r) => s + figure(r), 0);

describe('a chaos run’s summary', () => {
  it('sums every schedule’s figures and lists each failing schedule, whatever the order they end in', () => {
    fc.assert(
      fc.property(fc.array(resultArb, { maxLength: 12 }), (results) => {
        const summary = foldSchedules(results);
        expect(summary.schedules).toBe(results.length);
        expect(summary.mismatches).toBe(total(results, (r) => r.mismatches));
        expect(summary.lost).toBe(total(results, (r) => r.lost));
        expect(summary.doubleCounted).toBe(total(results, (r) => r.doubleCounted));
        expect(summary.staleOverwrites).toBe(total(results, (r) => r.staleOverwrites));
        expect(summary.events).toBe(total(results, (r) => r.events));
        expect(summary.failures).toEqual(
          results.filter((r) => r.diff).map((r) => ({ seed: r.seed, diff: r.diff })),
        );
        expect(summary.crashPoints).toEqual({
          covered: new Set(results.flatMap((r) => r.crashPoints)).size,
          total: CRASH_POINTS.length,
        });
        expect(summary.restores).toBe(results.filter((r) => r.restored).length);
        expect(summary.quarantineSchedules).toBe(
          results.filter((r) => r.latePolicy === 'quarantine').length,
        );
        // The figures do not depend on the order the schedules are folded in.
        const { failures: _, ...figures } = summary;
        const { failures: __, ...reversed } = foldSchedules([...results].reverse());
        expect(reversed).toEqual(figures);
      }),
    );
  });

  it('keeps one schedule’s mismatch after any number of clean ones, and gives one schedule alone the same', () => {
    fc.assert(
      fc.property(
        resultArb.filter((r) => r.mismatches > 0),
        fc.array(
          resultArb.map((r) => {
            const { diff: _, ...clean } = r;
            return { ...clean, mismatches: 0 };
          }),
          { minLength: 1, maxLength: 8 },
        ),
        (failing, clean) => {
          const summary = foldSchedules([failing, ...clean]);
          expect(summary.mismatches).toBe(failing.mismatches);
          expect(summary.failures).toEqual([{ seed: failing.seed, diff: failing.diff }]);
          expect(summaryOf(failing).mismatches).toBe(failing.mismatches);
        },
      ),
    );
  });

  it('exits 1 on any mismatch, and on a run that left a crash point unexercised, saying why', () => {
    fc.assert(
      fc.property(fc.array(resultArb, { minLength: 1, maxLength: 12 }), (results) => {
        const summary = foldSchedules(results);
        const { covered, total } = summary.crashPoints;
        const run = exitOf(summary, false);
        expect(run.code).toBe(summary.mismatches > 0 || covered < total ? 1 : 0);
        // Why, when the summary itself shows nothing wrong.
        expect(run.why !== undefined).toBe(summary.mismatches === 0 && covered < total);
        // One schedule alone proves its own points only: its mismatches alone decide.
        expect(exitOf(summary, true)).toEqual({ code: summary.mismatches > 0 ? 1 : 0 });
      }),
    );
  });
});
