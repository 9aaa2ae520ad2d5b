/**
 * Finishing hours. An hour stays open until the watermark passes its end and no batch in
 * progress can still touch it; then the finalizer closes it (a mark beside its counters), makes
 * it final once no batch that found it open can still add to it, publishes it as final, records
 * the revision it published, and lists it in its day's index.
 *
 * Closing comes first because of the `quarantine` policy: a batch decides which of its hours are
 * too late right after its ledger claim put it in the pending index, from the marks read then.
 * A batch that found an hour open was therefore pending before the hour closed, so a look at the
 * pending index taken a grace period after closing (longer than the index's lag) sees it until
 * it commits. Under `amend` nothing is refused, and the grace is 0.
 *
 * Every step is idempotent and the cursor moves only after them, so a run that crashes anywhere
 * is simply redone by the next one; two runs at once agree through the create-only marks and the
 * objects' compare-and-swap. An hour is never final before its mark says so, and the mark says
 * so only once the hour qualifies: a crash cannot make an hour wrongly final.
 */
import * as v from 'valibot';
import { type AggregatorPorts, type PublishOutcome, publishHour } from './aggregator.ts';
import { mapLimit } from './concurrency.ts';
import { type DayIndexPorts, publishDayIndex } from './day-index.ts';
import type { FinalMark } from './lifecycle.ts';
import { formatHour, MS_PER_HOUR, parseHour } from './time.ts';
import { type EventClock, isPastWatermark, watermarkMs } from './watermark.ts';

export interface FinalMarks {
  /** Closes the hour now, or returns the mark it already has. */
  close(hour: string, nowMs: number): Promise<FinalMark>;
  /** Makes a closed hour final now, or returns the mark if it already is. */
  confirm(hour: string, nowMs: number): Promise<FinalMark>;
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
  /**
   * How long after closing an hour a look at the pending index shows every batch that found it
   * open (0 under `amend`, where a batch the index missed lands as an amendment).
   */
  readonly closeGraceMs: number;
}

/** Hours closed and published as final, and days indexed, at once. */
const HOURS_IN_FLIGHT = 16;

/** The grace under `quarantine`: far above the pending index's lag (seconds at most). */
export const QUARANTINE_CLOSE_GRACE_MS = 60_000;

/** What a run did: the function's result, validated where it is read back (CLI, `npm start`). */
export const FinalizerRunSchema = v.object({
  /** The watermark, ISO; absent before any event was applied. */
  watermark: v.optional(v.string()),
  finalized: v.array(v.object({ hour: v.string(), revision: v.number(), events: v.number() })),
  /** The first hour still open. */
  nextHour: v.optional(v.string()),
  /** Why the run stopped there, if not the watermark. */
  heldBy: v.optional(v.picklist(['pending-batch', 'hours-per-run', 'closing'])),
  /** Hours closed by this run, final on a later one (after the grace). */
  closed: v.optional(v.array(v.string())),
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
  // A batch in progress may still add to any hour from its earliest event on.
  const lookAtPending = async () => ({
    atMs: ports.now(),
    hour: await ports.earliestPendingHour(),
  });
  let pending = await lookAtPending();
  const held = (hour: string) => pending.hour !== undefined && hour >= pending.hour;

  // The hours that qualify now, in order.
  const candidates: string[] = [];
  let heldBy: FinalizerRun['heldBy'] | undefined;
  for (let hour = start; isPastWatermark(hour, watermark); hour = nextHourOf(hour)) {
    if (held(hour)) {
      heldBy = 'pending-batch';
      break;
    }
    if (candidates.length >= settings.maxHoursPerRun) {
      heldBy = 'hours-per-run';
      break;
    }
    candidates.push(hour);
  }
  const marks = await ports.marks.marksOf(candidates);
  const closed = candidates.filter((c) => !marks.has(c));
  const closing = await mapLimit(closed, HOURS_IN_FLIGHT, async (hour) => ({
    hour,
    mark: await ports.marks.close(hour, ports.now()),
  }));
  for (const { hour, mark } of closing) marks.set(hour, mark);
  // Without a grace, a second look after closing is all it takes (the hours may have been
  // closed by this run or by a concurrent one).
  const grace = settings.closeGraceMs;
  if (grace === 0 && candidates.some((c) => marks.get(c)?.finalizedAtMs === undefined))
    pending = await lookAtPending();

  // The hours that can be final now: the candidates up to the first one still held.
  const ready: string[] = [];
  for (const candidate of candidates) {
    const mark = marks.get(candidate);
    if (mark?.finalizedAtMs === undefined) {
      if (!mark || (grace > 0 && mark.closedAtMs + grace > pending.atMs)) {
        heldBy = 'closing';
        break;
      }
      if (held(candidate)) {
        heldBy = 'pending-batch';
        break;
      }
    }
    ready.push(candidate);
  }
  // Hours are independent of one another: a backlog (a week is 168 hours) is published several at
  // a time. If one fails, the cursor stays and the next run redoes them all, each idempotently.
  const finalized = await mapLimit(ready, HOURS_IN_FLIGHT, async (hour): Promise<FinalizedHour> => {
    if (marks.get(hour)?.finalizedAtMs === undefined) await ports.marks.confirm(hour, ports.now());
    const published = publishedOf(await publishHour(hour, ports.aggregator));
    await ports.marks.recordFinalRevision(hour, published.revision);
    return { hour, ...published };
  });
  // Each day's index after its hour objects: a reader never finds an entry before its object.
  // Days are independent of one another too.
  await mapLimit([...new Set(finalized.map((f) => f.hour.slice(0, 10)))], HOURS_IN_FLIGHT, (date) =>
    publishDayIndex(date, ports.index),
  );
  const last = finalized.at(-1);
  if (last) await ports.marks.advanceCursor(nextHourOf(last.hour));
  return {
    ...(iso ? { watermark: iso } : {}),
    finalized,
    nextHour: last ? nextHourOf(last.hour) : start,
    ...(heldBy ? { heldBy } : {}),
    ...(closed.length > 0 ? { closed } : {}),
  };
};
