/**
 * Every version of the hour objects the harness reads, in the order it read them: what a
 * consumer polling the bucket could have seen. Reads are serialized, so for each hour a later
 * entry is a version at least as new as an earlier one. The judge checks the lifecycle's promise
 * on them: once final, an hour stays final, and its content changes only with its amendments
 * count raised.
 */
import type { S3Store } from '../../adapters/s3.ts';
import { mapLimit } from '../../shared/concurrency.ts';

interface Observed {
  readonly final: boolean;
  readonly amendments: number;
  /** What a consumer aggregates: the counts and amounts, not the revision or computedAt. */
  readonly content: string;
}

export class VersionLog {
  readonly #store: Pick<S3Store, 'listHourEtags' | 'get'>;
  readonly #byHour = new Map<string, Observed[]>();
  /** The ETag of each hour's object as last read: an object listed with it again is unchanged. */
  readonly #etags = new Map<string, string>();
  #reads: Promise<void> = Promise.resolve();
  #count = 0;

  constructor(store: Pick<S3Store, 'listHourEtags' | 'get'>) {
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
    // Only the objects whose ETag changed since the last read: the same ETag is the same bytes,
    // so reading it again could record nothing new.
    const changed = (await this.#store.listHourEtags()).filter(
      ({ hour, etag }) => this.#etags.get(hour) !== etag,
    );
    const stored = await mapLimit(changed, 16, ({ hour }) => this.#store.get(hour));
    for (const [i, { hour }] of changed.entries()) {
      const object = stored[i];
      if (!object) continue;
      this.#etags.set(hour, object.etag);
      const { aggregate, lifecycle } = object;
      if (!aggregate) continue;
      const seen = this.#byHour.get(hour) ?? [];
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
      this.#byHour.set(hour, seen);
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
