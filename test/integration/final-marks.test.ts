/**
 * The finalizer's marks in DynamoDB Local: each hour's closing time, the time it became final and
 * the revision first published as final are each written once, so finalizers that overlap agree
 * on all three, and its cursor only moves forward.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DynamoFinalMarks } from '../../adapters/dynamo-hours.ts';
import { RetryableError } from '../../shared/errors.ts';
import type { FinalMark } from '../../shared/lifecycle.ts';
import { createPipeline, type Pipeline } from '../support/pipeline.ts';

const HOUR_MS = 3_600_000;
const hourAt = (index: number) =>
  new Date(Date.parse('2026-10-01T00:00:00Z') + index * HOUR_MS).toISOString().replace('.000', '');

const marksOf = (p: Pipeline) => new DynamoFinalMarks(p.admin.dynamo, p.tableName);

describe('the finalizer’s marks', () => {
  it('keeps the first closing time and the final mark when an hour is closed again', async () => {
    const p = await createPipeline();
    const marks = marksOf(p);
    const hour = hourAt(9);
    expect(await marks.close(hour, 1_000)).toEqual({ closedAtMs: 1_000 });
    expect(await marks.close(hour, 2_000)).toEqual({ closedAtMs: 1_000 });
    expect(await marks.confirm(hour, 3_000)).toEqual({ closedAtMs: 1_000, finalizedAtMs: 3_000 });
    await marks.recordFinalRevision(hour, 7);
    // A finalizer that read no mark before another finalized the hour closes it late.
    const final = { closedAtMs: 1_000, finalizedAtMs: 3_000, finalRevision: 7 };
    expect(await marks.close(hour, 4_000)).toEqual(final);
    expect((await marks.marksOf([hour])).get(hour)).toEqual(final);
  });

  it('keeps the first time an hour became final, and refuses to confirm one never closed', async () => {
    const p = await createPipeline();
    const marks = marksOf(p);
    const [open, hour] = [hourAt(8), hourAt(9)];
    await expect(marks.confirm(open, 1_000)).rejects.toBeInstanceOf(RetryableError);
    expect(await marks.marksOf([open])).toEqual(new Map());
    await marks.close(hour, 1_000);
    expect(await marks.confirm(hour, 2_000)).toEqual({ closedAtMs: 1_000, finalizedAtMs: 2_000 });
    expect(await marks.confirm(hour, 3_000)).toEqual({ closedAtMs: 1_000, finalizedAtMs: 2_000 });
  });

  it('keeps the first revision published as final, and records none for an hour never closed', async () => {
    const p = await createPipeline();
    const marks = marksOf(p);
    const [open, hour] = [hourAt(8), hourAt(9)];
    await marks.recordFinalRevision(open, 3);
    expect(await marks.marksOf([open])).toEqual(new Map());
    await marks.close(hour, 1_000);
    await marks.confirm(hour, 2_000);
    await marks.recordFinalRevision(hour, 3);
    await marks.recordFinalRevision(hour, 5);
    expect((await marks.marksOf([hour])).get(hour)?.finalRevision).toBe(3);
  });

  it('moves the cursor forward only', async () => {
    const p = await createPipeline();
    const marks = marksOf(p);
    expect(await marks.cursor()).toBeUndefined();
    await marks.advanceCursor(hourAt(10));
    await marks.advanceCursor(hourAt(9));
    expect(await marks.cursor()).toBe(hourAt(10));
    await marks.advanceCursor(hourAt(12));
    expect(await marks.cursor()).toBe(hourAt(12));
  });

  it('gives every overlapping finalizer the stored mark, for any closes and confirms at once', async () => {
    const p = await createPipeline();
    const marks = marksOf(p);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            op: fc.constantFrom('close', 'confirm'),
            atMs: fc.integer({ min: 1, max: 1_000_000 }),
          }),
          { minLength: 1, maxLength: 10 },
        ),
        async (calls) => {
          const hour = hourAt(run++);
          const outcomes = await Promise.allSettled(
            calls.map(({ op, atMs }) =>
              op === 'close' ? marks.close(hour, atMs) : marks.confirm(hour, atMs),
            ),
          );
          const stored: FinalMark | undefined = (await marks.marksOf([hour])).get(hour);
          const closes = calls.filter((c) => c.op === 'close').map((c) => c.atMs);
          if (closes.length === 0) expect(stored).toBeUndefined();
          else expect(closes).toContain(stored?.closedAtMs);
          for (const [i, outcome] of outcomes.entries()) {
            if (outcome.status === 'rejected') {
              // Only a confirm can fail, and only for want of a close.
              expect(calls[i]?.op).toBe('confirm');
              expect(outcome.reason).toBeInstanceOf(RetryableError);
              continue;
            }
            expect(outcome.value.closedAtMs).toBe(stored?.closedAtMs);
            if (calls[i]?.op === 'confirm' || outcome.value.finalizedAtMs !== undefined)
              expect(outcome.value.finalizedAtMs).toBe(stored?.finalizedAtMs);
          }
          const confirmed = outcomes.some(
            (o, i) => o.status === 'fulfilled' && calls[i]?.op === 'confirm',
          );
          expect(stored?.finalizedAtMs !== undefined).toBe(confirmed);
        },
      ),
      { numRuns: 40 },
    );
  });
});
