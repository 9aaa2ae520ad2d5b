/**
 * Finishing hours. An hour stays open until the watermark passes its end and no batch in
 * progress can still touch it; then the finalizer marks it (beside its counters), publishes it
 * as final, records the revision it published, and lists it in its day's index.
 *
 * Every step is idempotent and the cursor moves only after them, so a run that crashes anywhere
 * is simply redone by the next one; two runs at once agree through the create-only mark and the
 * objects' compare-and-swap. An hour is never final before its mark, and the mark is written
 * only once the hour qualifies: a crash cannot make an hour wrongly final.
 */
import * as v from 'valibot';
import { type AggregatorPorts, type PublishOutcome, publishHour } from './aggregator.ts';
import { type DayIndexPorts, publishDayIndex } from './day-index.ts';
import type { FinalMark } from './lifecycle.ts';
import { formatHour, MS_PER_HOUR, parseHour } from './time.ts';
import { type EventClock, isPastWatermark, watermarkMs } from './watermark.ts';

export interface FinalMarks {
  /** Marks the hour final now, or returns the mark it already has. */
  mark(hour: string, nowMs: number): Promise<FinalMark>;
  /** Records the revision published as final (the first record stays). */
  recordFinalRevision(hour: string, revision: number): Promise<void>;
  /** The marks of these hours (those that have one). */
  marksOf(hours: readonly string[]): Promise<Map<string, FinalMark>>;
  /** The first hour not finalized yet; undefined before the first run. */
  cursor(): Promise<string | undefined>;
  /** Moves the cursor forward (never back). */
  advanceCursor(hour: string): Promise<void>;
}

export interface FinalizerPorts {
  readonly clock: Pick<EventClock, 'latest'>;
  readonly marks: FinalMarks;
  /** The earliest hour a batch in progress can touch (the hour of its earliest event). */
  earliestPendingHour(): Promise<string | undefined>;
  /** The earliest hour any batch was archived under: where the first run starts. */
  earliestArchivedHour(): Promise<string | undefined>;
  readonly aggregator: AggregatorPorts;
  readonly index: DayIndexPorts;
  readonly now: () => number;
}

export interface FinalizerSettings {
  /** How far behind the latest applied event time the watermark stays. */
  readonly allowedLatenessMinutes: number;
  /** Hours finalized per run at most (a backlog is worked off over several runs). */
  readonly maxHoursPerRun: number;
}

/** What a run did: the function's result, validated where it is read back (CLI, `npm start`). */
export const FinalizerRunSchema = v.object({
  /** The watermark, ISO; absent before any event was applied. */
  watermark: v.optional(v.string()),
  finalized: v.array(v.object({ hour: v.string(), revision: v.number(), events: v.number() })),
  /** The first hour still open. */
  nextHour: v.optional(v.string()),
  /** Why the run stopped there, if not the watermark. */
  heldBy: v.optional(v.picklist(['pending-batch', 'hours-per-run'])),
});

export type FinalizerRun = v.InferOutput<typeof FinalizerRunSchema>;
export type FinalizedHour = FinalizerRun['finalized'][number];

const nextHourOf = (hour: string) => formatHour((parseHour(hour) ?? 0) + MS_PER_HOUR);

const publishedOf = (outcome: PublishOutcome) =>
  outcome.kind === 'written' || outcome.kind === 'unchanged'
    ? { revision: outcome.aggregate.revision, events: outcome.aggregate.events }
    : { revision: 0, events: 0 };

/** One run: finalizes every qualifying hour from the cursor on, in order. */
export const finalizeHours = async (
  ports: FinalizerPorts,
  settings: FinalizerSettings,
): Promise<FinalizerRun> => {
  const latest = await ports.clock.latest();
  const watermark = watermarkMs(latest, settings.allowedLatenessMinutes);
  const start = (await ports.marks.cursor()) ?? (await ports.earliestArchivedHour());
  const iso = Number.isFinite(watermark) ? new Date(watermark).toISOString() : undefined;
  if (start === undefined) return { ...(iso ? { watermark: iso } : {}), finalized: [] };
  // A batch in progress may still add to any hour from its earliest event on (the pending index
  // is seconds behind at most; a batch it misses lands as an amendment, which says so).
  const pending = await ports.earliestPendingHour();
  const finalized: FinalizedHour[] = [];
  let hour = start;
  let heldBy: FinalizerRun['heldBy'] | undefined;
  while (isPastWatermark(hour, watermark)) {
    if (pending !== undefined && hour >= pending) {
      heldBy = 'pending-batch';
      break;
    }
    if (finalized.length >= settings.maxHoursPerRun) {
      heldBy = 'hours-per-run';
      break;
    }
    await ports.marks.mark(hour, ports.now());
    const published = publishedOf(await publishHour(hour, ports.aggregator));
    await ports.marks.recordFinalRevision(hour, published.revision);
    finalized.push({ hour, ...published });
    hour = nextHourOf(hour);
  }
  // Each day's index after its hour objects: a reader never finds an entry before its object.
  for (const date of new Set(finalized.map((f) => f.hour.slice(0, 10))))
    await publishDayIndex(date, ports.index);
  if (finalized.length > 0) await ports.marks.advanceCursor(hour);
  return {
    ...(iso ? { watermark: iso } : {}),
    finalized,
    nextHour: hour,
    ...(heldBy ? { heldBy } : {}),
  };
};
