/**
 * Every version of the hour objects the harness reads, in the order it read them: what a
 * consumer polling the bucket could have seen. Reads are serialized, so for each hour a later
 * entry is a version at least as new as an earlier one. The judge checks the lifecycle's promise
 * on them: once final, an hour stays final, and its content changes only with its amendments
 * count raised.
 */
import type { S3Store } from '../../adapters/s3.ts';

interface Observed {
  readonly final: boolean;
  readonly amendments: number;
  /** What a consumer aggregates: the counts and amounts, not the revision or computedAt. */
  readonly content: string;
}

export class VersionLog {
  readonly #store: Pick<S3Store, 'listHourObjects'>;
  readonly #byHour = new Map<string, Observed[]>();
  #reads: Promise<void> = Promise.resolve();
  #count = 0;

  constructor(store: Pick<S3Store, 'listHourObjects'>) {
    this.#store = store;
  }

  /** Reads every hour object once (after any read still in progress) and records what changed. */
  observe(): Promise<void> {
    const read = this.#reads.then(() => this.#read());
    // The next read waits for this one whatever its outcome; the caller still sees a failure.
    this.#reads = read.catch(() => undefined);
    return read;
  }

  async #read(): Promise<void> {
    for (const { aggregate, lifecycle } of await this.#store.listHourObjects()) {
      const seen = this.#byHour.get(aggregate.hour) ?? [];
      const observed: Observed = {
        final: lifecycle.final === true,
        amendments: lifecycle.amendments ?? 0,
        content: JSON.stringify([aggregate.events, aggregate.byStatus]),
      };
      const last = seen.at(-1);
      if (
        !last ||
        last.final !== observed.final ||
        last.amendments !== observed.amendments ||
        last.content !== observed.content
      ) {
        seen.push(observed);
        this.#count++;
      }
      this.#byHour.set(aggregate.hour, seen);
    }
  }

  /** Distinct versions recorded. */
  get versions(): number {
    return this.#count;
  }

  /** Each hour that was read final and later open, or changed after final without saying so. */
  violations(): string[] {
    const found: string[] = [];
    for (const [hour, seen] of this.#byHour) {
      let final: Observed | undefined;
      for (const v of seen) {
        if (final && !v.final) found.push(`${hour} was read final, then open`);
        else if (final && v.content !== final.content && v.amendments <= final.amendments)
          found.push(`${hour} changed after it was read final, amendments still ${v.amendments}`);
        if (v.final) final = v;
      }
    }
    return found;
  }
}
