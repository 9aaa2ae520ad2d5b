import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isPastWatermark,
  MAX_AHEAD_MS,
  WATERMARK_STEP_MS,
  watermarkMs,
  watermarkStepOf,
} from '../../shared/watermark.ts';

const at = (iso: string) => Date.parse(iso);

describe('the watermark', () => {
  it('rounds the latest event time down to its step, never past it', () => {
    const received = at('2026-12-01T00:00:00Z');
    expect(watermarkStepOf(at('2026-10-01T09:14:59Z'), received)).toBe(at('2026-10-01T09:00:00Z'));
    expect(watermarkStepOf(at('2026-10-01T09:15:00Z'), received)).toBe(at('2026-10-01T09:15:00Z'));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4e12 }), (t) => {
        const step = watermarkStepOf(t, 4e12);
        expect(step).toBeLessThanOrEqual(t);
        expect(t - step).toBeLessThan(WATERMARK_STEP_MS);
        expect(step % WATERMARK_STEP_MS).toBe(0);
      }),
    );
  });

  it('holds an event time from a clock far ahead to a few minutes past its arrival', () => {
    const received = at('2026-12-01T10:00:00Z');
    expect(watermarkStepOf(at('2099-01-01T00:00:00Z'), received)).toBe(at('2026-12-01T10:00:00Z'));
    expect(MAX_AHEAD_MS).toBe(5 * 60_000);
  });

  it('passes an hour once the latest event time minus the lateness reaches its end', () => {
    const latest = at('2026-10-01T12:00:00Z');
    const watermark = watermarkMs(latest, 120);
    expect(watermark).toBe(at('2026-10-01T10:00:00Z'));
    expect(isPastWatermark('2026-10-01T09:00:00Z', watermark)).toBe(true);
    expect(isPastWatermark('2026-10-01T10:00:00Z', watermark)).toBe(false);
    expect(isPastWatermark('2026-10-01T09:00:00Z', watermarkMs(undefined, 0))).toBe(false);
  });
});
