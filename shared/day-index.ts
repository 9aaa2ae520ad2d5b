/**
 * The consumer's index of final hours: per day, the hours that are final and the revision each
 * holds (`aggregates/hourly/_final/date=YYYY-MM-DD.json`).
 *
 * It is rebuilt from the hour objects of the hours it lists already, those with a mark and those
 * the caller knows final, and written with compare-and-swap on its ETag, read before them (as
 * hour objects are). What it lists only grows (hours become final, revisions and amendments
 * grow): a rebuild reads every hour the stored index lists, so a writer that wins the swap never
 * lists less than the one it replaced while the objects stay, even when marks are gone (a table
 * restored to a copy older than them). An hour is listed only once its object says final (or,
 * without events, once the finalizer recorded it), so a reader never finds an entry before its
 * object.
 */
import * as v from 'valibot';
import type { AggregateObjects } from './aggregator.ts';
import { RetryableError } from './errors.ts';
import type { FinalMark } from './lifecycle.ts';
import { hoursBetween } from './time.ts';

export const DayIndexSchema = v.object({
  date: v.string(),
  hours: v.array(
    v.object({
      hour: v.string(),
      revision: v.pipe(v.number(), v.integer(), v.minValue(0)),
      events: v.pipe(v.number(), v.integer(), v.minValue(0)),
      amendments: v.pipe(v.number(), v.integer(), v.minValue(0)),
    }),
  ),
  updatedAt: v.string(),
});

export type DayIndex = v.InferOutput<typeof DayIndexSchema>;
export type DayIndexEntry = DayIndex['hours'][number];

export interface DayIndexObjects {
  /** The day's index and its ETag; undefined when there is none (or not a valid one: no body). */
  getDayIndex(date: string): Promise<{ etag: string; index: DayIndex | undefined } | undefined>;
  /** Writes if the index still has `etag` (or, with undefined, still does not exist). */
  putDayIndexIfUnchanged(date: string, index: DayIndex, etag: string | undefined): Promise<boolean>;
}

export interface DayIndexPorts {
  readonly marks: { marksOf(hours: readonly string[]): Promise<Map<string, FinalMark>> };
  readonly objects: AggregateObjects & DayIndexObjects;
  readonly now: () => number;
}

const MAX_ATTEMPTS = 8;

const entriesOf = (index: DayIndex | undefined) => JSON.stringify(index?.hours ?? []);

/**
 * Rebuilds and publishes one day's index if it changed. Safe to repeat and to run at once.
 * `finalHours`: hours of that day the caller saw final (an object it just published), read even
 * without a mark.
 */
export const publishDayIndex = async (
  date: string,
  ports: DayIndexPorts,
  finalHours: readonly string[] = [],
): Promise<DayIndex> => {
  const dayStart = Date.parse(`${date}T00:00:00Z`);
  const hours = hoursBetween(dayStart, dayStart + 24 * 3_600_000);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const stored = await ports.objects.getDayIndex(date);
    const marks = await ports.marks.marksOf(hours);
    const listed = new Map((stored?.index?.hours ?? []).map((entry) => [entry.hour, entry]));
    const entries: DayIndexEntry[] = [];
    for (const hour of hours) {
      const mark = marks.get(hour);
      const before = listed.get(hour);
      if (!mark && !before && !finalHours.includes(hour)) continue;
      const object = await ports.objects.get(hour);
      if (object?.aggregate && object.lifecycle.final) {
        entries.push({
          hour,
          revision: object.aggregate.revision,
          events: object.aggregate.events,
          amendments: object.lifecycle.amendments ?? 0,
        });
      } else if (!object && (mark?.finalRevision === 0 || before?.revision === 0)) {
        // Final without events: recorded so by the finalizer, or listed so before its mark went.
        // (An entry whose object is gone, deleted by a reconcile, is not: nothing backs it.)
        entries.push({ hour, revision: 0, events: 0, amendments: 0 });
      }
    }
    const index: DayIndex = {
      date,
      hours: entries,
      updatedAt: new Date(ports.now()).toISOString(),
    };
    if (stored?.index && entriesOf(stored.index) === entriesOf(index)) return stored.index;
    if (await ports.objects.putDayIndexIfUnchanged(date, index, stored?.etag)) return index;
  }
  throw new RetryableError(`day index ${date}: lost ${MAX_ATTEMPTS} publish races in a row`);
};

/**
 * Republishes a final hour's day index unless it already lists the hour as its object says: a
 * publication that crashed between the object and the index (or lost its index race) is redone
 * by the redelivery, which finds the object unchanged. One read when the index is current.
 */
export const ensureListed = async (entry: DayIndexEntry, ports: DayIndexPorts): Promise<void> => {
  const date = entry.hour.slice(0, 10);
  const listed = (await ports.objects.getDayIndex(date))?.index?.hours.find(
    (h) => h.hour === entry.hour,
  );
  if (
    listed?.revision === entry.revision &&
    listed.amendments === entry.amendments &&
    listed.events === entry.events
  )
    return;
  await publishDayIndex(date, ports, [entry.hour]);
};
