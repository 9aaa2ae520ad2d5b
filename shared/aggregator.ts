/**
 * Publishing one hour to S3 without ever going backwards.
 *
 * The object's ETag is read *before* the counters, and the write is conditional on that ETag.
 * Counters only grow, so a writer whose conditional write succeeds read its counters after the
 * object it replaced was published; any later writer reads later counters still. An older
 * recompute therefore cannot overwrite a newer one, and no revision comparison is needed for
 * safety (which keeps `reconcile` able to publish a lower revision after a table restore).
 */
import {
  aggregateHour,
  type CounterShard,
  type HourAggregate,
  sameAggregate,
} from './aggregate.ts';
import { RetryableError } from './errors.ts';
import { type FinalMark, type HourLifecycle, nextLifecycle, sameLifecycle } from './lifecycle.ts';

export interface HourCounters {
  readonly shards: readonly CounterShard[];
  /** The finalizer's mark, when the hour is final. */
  readonly mark: FinalMark | undefined;
}

export interface CounterReader {
  /** Every counter shard of the hour and its final mark, read strongly consistent (one query). */
  readHour(hour: string): Promise<HourCounters>;
}

export interface StoredObject {
  readonly etag: string;
  /** Undefined when the object exists but does not hold a valid aggregate. */
  readonly aggregate: HourAggregate | undefined;
  readonly lifecycle: HourLifecycle;
}

/** What an hour object holds: the aggregate, when it was computed, and its lifecycle. */
export type HourObjectBody = HourAggregate & { readonly computedAt: string } & HourLifecycle;

export interface AggregateObjects {
  get(hour: string): Promise<StoredObject | undefined>;
  /** Writes if the object still has `etag` (or, with undefined, still does not exist). */
  putIfUnchanged(hour: string, body: HourObjectBody, etag: string | undefined): Promise<boolean>;
  /** Deletes if the object still has `etag`. */
  deleteIfUnchanged(hour: string, etag: string): Promise<boolean>;
}

export interface AggregatorPorts {
  readonly counters: CounterReader;
  readonly objects: AggregateObjects;
  readonly now: () => number;
}

export type PublishOutcome =
  | {
      readonly kind: 'written';
      readonly aggregate: HourAggregate;
      readonly lifecycle: HourLifecycle;
      /** A final hour's content changed: its amendments count grew. */
      readonly amended: boolean;
      readonly previousRevision?: number;
    }
  | {
      readonly kind: 'unchanged';
      readonly aggregate: HourAggregate;
      /** The stored object's lifecycle (the same as it would publish). */
      readonly lifecycle: HourLifecycle;
    }
  | { readonly kind: 'deleted' }
  | { readonly kind: 'empty' };

/** Attempts before giving up and letting SQS redeliver: each lost race means someone published. */
const MAX_ATTEMPTS = 8;

/** What publishing the hour would do now, without doing it (for dry runs and verification). */
export const planHour = async (hour: string, ports: AggregatorPorts) => {
  const stored = await ports.objects.get(hour);
  const { shards, mark } = await ports.counters.readHour(hour);
  const aggregate = aggregateHour(hour, shards);
  const next = nextLifecycle({ mark, stored, aggregate, nowMs: ports.now() });
  const action: 'write' | 'delete' | 'unchanged' =
    aggregate.events === 0
      ? stored
        ? 'delete'
        : 'unchanged'
      : stored?.aggregate &&
          sameAggregate(stored.aggregate, aggregate) &&
          sameLifecycle(stored.lifecycle, next.lifecycle)
        ? 'unchanged'
        : 'write';
  return { stored, aggregate, action, mark, ...next };
};

/** Recomputes `hour` from the counters and publishes it if it changed. Safe to repeat. */
export const publishHour = async (
  hour: string,
  ports: AggregatorPorts,
): Promise<PublishOutcome> => {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const { stored, aggregate, action, lifecycle, amended } = await planHour(hour, ports);
    if (action === 'unchanged') {
      return aggregate.events === 0
        ? { kind: 'empty' }
        : { kind: 'unchanged', aggregate, lifecycle };
    }
    if (action === 'delete' && stored) {
      // Only after a restore or a manual edit: an hour without events has no object.
      if (await ports.objects.deleteIfUnchanged(hour, stored.etag)) return { kind: 'deleted' };
      continue;
    }
    // computedAt also keeps ETags (content hashes) from repeating, so a compare-and-swap can
    // never mistake a republished older body for the one it read.
    const body = { ...aggregate, computedAt: new Date(ports.now()).toISOString(), ...lifecycle };
    if (await ports.objects.putIfUnchanged(hour, body, stored?.etag)) {
      const previous = stored?.aggregate?.revision;
      return {
        kind: 'written',
        aggregate,
        lifecycle,
        amended,
        ...(previous === undefined ? {} : { previousRevision: previous }),
      };
    }
  }
  throw new RetryableError(`hour ${hour}: lost ${MAX_ATTEMPTS} publish races in a row`);
};
