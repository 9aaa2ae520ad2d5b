/**
 * The watermark: the event time up to which input is considered complete, the latest event time
 * applied minus an allowed lateness. An hour can be finalized once the watermark passes its end.
 *
 * The latest event time is kept in steps of `WATERMARK_STEP_MS`, and each ingest environment
 * remembers the step it last saw stored: it writes only when one of its batches moves the
 * watermark to a later step. A steady stream therefore costs each environment one conditional
 * write per step, whatever the rate, and the item is never a hot key. Rounding down only makes
 * the watermark later to pass an hour, never earlier.
 */
import { MS_PER_HOUR } from './time.ts';

export const WATERMARK_STEP_MS = 15 * 60_000;

/**
 * How far ahead of the arrival time an event time may move the watermark: a producer's clock
 * far in the future must not finalize hours that are still being written.
 */
export const MAX_AHEAD_MS = 5 * 60_000;

/** The step a batch's latest event time moves the watermark to, given when it arrived. */
export const watermarkStepOf = (latestEventMs: number, receivedAtMs: number) =>
  Math.floor(Math.min(latestEventMs, receivedAtMs + MAX_AHEAD_MS) / WATERMARK_STEP_MS) *
  WATERMARK_STEP_MS;

/** The watermark, from the stored latest event time (undefined: nothing applied yet). */
export const watermarkMs = (latestStepMs: number | undefined, allowedLatenessMinutes: number) =>
  latestStepMs === undefined
    ? Number.NEGATIVE_INFINITY
    : latestStepMs - allowedLatenessMinutes * 60_000;

/** Whether the watermark has passed the end of `hour` (`2026-10-01T09:00:00Z`). */
export const isPastWatermark = (hour: string, watermark: number) =>
  Date.parse(hour) + MS_PER_HOUR <= watermark;

/** Where the latest applied event time is kept. */
export interface EventClock {
  /** Moves the latest event time forward to this batch's step, if it is later. */
  advance(latestEventMs: number, receivedAtMs: number): Promise<void>;
  /** The stored latest event time (a step), read strongly consistent. */
  latest(): Promise<number | undefined>;
}
