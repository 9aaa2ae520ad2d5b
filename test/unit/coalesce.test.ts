/**
 * The argument that coalescing loses no update (shared/coalesce.ts): SQS keeps the first
 * notification of a deduplication id and drops the others, and the kept one becomes visible a
 * window after it was sent. So every dropped one must have been sent before that: less than a
 * window after the kept one. And it must coalesce: an hour's notifications of one window share
 * an id.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hourNotificationFields } from '../../shared/coalesce.ts';

const HOUR = '2026-10-01T09:00:00Z';
const sendTime = fc.integer({ min: 0, max: 2 ** 42 });
const window = fc.integer({ min: 1, max: 60 });
/** A later send, from the same moment to three windows on, in hundredths of the window. */
const hundredths = fc.integer({ min: 0, max: 300 });

const idOf = (sentMs: number, windowSeconds: number) =>
  hourNotificationFields(HOUR, sentMs, windowSeconds).deduplicationId;

describe('coalescing hour notifications', () => {
  it('drops a notification only when it was sent less than a window after the one kept', () => {
    fc.assert(
      fc.property(sendTime, window, hundredths, (keptMs, windowSeconds, k) => {
        const laterMs = keptMs + Math.floor((k * windowSeconds * 1000) / 100);
        if (idOf(keptMs, windowSeconds) === idOf(laterMs, windowSeconds))
          expect(laterMs - keptMs).toBeLessThan(windowSeconds * 1000);
      }),
      { numRuns: 2000 },
    );
  });

  it('gives an hour’s notifications of one window one id, so that one publication takes them', () => {
    fc.assert(
      fc.property(sendTime, window, hundredths, (anyMs, windowSeconds, k) => {
        const windowMs = windowSeconds * 1000;
        // Two sends in the same window of the clock.
        const startMs = anyMs - (anyMs % windowMs);
        const laterMs = startMs + Math.floor((Math.min(k, 99) * windowMs) / 100);
        expect(idOf(laterMs, windowSeconds)).toBe(idOf(startMs, windowSeconds));
        expect(hourNotificationFields(HOUR, laterMs, windowSeconds).groupId).toBe(HOUR);
      }),
      { numRuns: 1000 },
    );
    expect(hourNotificationFields('2026-10-01T10:00:00Z', 0, 2).deduplicationId).not.toBe(
      idOf(0, 2),
    );
  });
});
