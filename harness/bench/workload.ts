/** The benchmark's workload: one generated stream, delivered four ways. */
import { randomUUID } from 'node:crypto';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { currencyExponent } from '../../shared/currencies.ts';
import { fromMinorUnits, toMinorUnits } from '../../shared/money.ts';
import { type GeneratedEvent, generateStream } from '../generate.ts';
import type { Message } from './approaches.ts';

export interface WorkloadOptions {
  readonly events: number;
  readonly batchSize: number;
  readonly seed: number;
  /** Share of batches delivered twice in the duplicate pass. */
  readonly duplicateShare: number;
  /** Share of batches whose first processing crashes after its writes in the crash pass. */
  readonly crashShare: number;
  /** Share of events re-sent under new batch ids, regrouped, in the re-batch pass. Default 0.2. */
  readonly rebatchShare?: number;
  /** Share of the re-sent events whose content changes (event conflicts). Default 0.1. */
  readonly conflictShare?: number;
}

export interface Workload {
  readonly options: WorkloadOptions;
  readonly batches: { batchId: string; events: GeneratedEvent[] }[];
  readonly events: number;
  readonly hours: number;
  readonly clean: Message[];
  readonly duplicates: Message[];
  readonly duplicated: number;
  readonly crashBatches: Set<string>;
  /** The clean pass, then re-sent events under new batch ids in a second wave. */
  readonly rebatch: Message[];
  /** The re-sent batches, in the model's shape (after the originals). */
  readonly resent: { batchId: string; events: GeneratedEvent[] }[];
  readonly resentEvents: number;
}

export const buildWorkload = (options: WorkloadOptions): Workload => {
  // About 3.3 events per order with the generator's lifecycle; take whole batches up to the count.
  const stream = generateStream({
    orders: Math.ceil(options.events / 3) + 10,
    hours: Math.max(24, Math.ceil(options.events / 400)),
    seed: options.seed,
    batchSize: options.batchSize,
  });
  const batches: Workload['batches'] = [];
  let events = 0;
  for (const b of stream.batches) {
    if (events >= options.events) break;
    const take = b.events.slice(0, options.events - events);
    batches.push({ batchId: b.batchId, events: take });
    events += take.length;
  }
  const body = (b: Workload['batches'][number]) =>
    JSON.stringify({ batchId: b.batchId, source: 'bench', events: b.events });
  const clean = batches.map((b) => ({
    messageId: randomUUID(),
    batchId: b.batchId,
    body: body(b),
  }));
  // Duplicates arrive as new messages (a producer's retry or a DLQ redrive: new message ids) in a
  // second wave, after their originals were applied. (A twin in the same SQS batch as its original
  // runs concurrently with it: exact too, but it pays for the race; the chaos runs cover that.)
  const rng = xoroshiro128plus(options.seed + 1);
  const copies = clean.filter(() => uniformInt(rng, 0, 9999) < options.duplicateShare * 10_000);
  const duplicates: Message[] = [
    ...clean,
    ...copies.map((m) => ({ ...m, messageId: randomUUID(), wave: 1 })),
  ];
  const duplicated = copies.length;
  const crashBatches = new Set(
    batches
      .filter(() => uniformInt(rng, 0, 9999) < options.crashShare * 10_000)
      .map((b) => b.batchId),
  );
  const hours = new Set(batches.flatMap((b) => b.events.map((e) => e.eventTime.slice(0, 13)))).size;
  const resent = rebatched(batches, options, rng);
  const rebatch: Message[] = [
    ...clean,
    ...resent.map((b) => ({ messageId: randomUUID(), batchId: b.batchId, body: body(b), wave: 1 })),
  ];
  return {
    options,
    batches,
    events,
    hours,
    clean,
    duplicates,
    duplicated,
    crashBatches,
    rebatch,
    resent,
    resentEvents: resent.reduce((n, b) => n + b.events.length, 0),
  };
};

/**
 * A producer re-sending after a timeout: a share of the applied events again, in a new order,
 * grouped into new batches under new ids; a share of those with another amount.
 */
const rebatched = (
  batches: Workload['batches'],
  options: WorkloadOptions,
  rng: ReturnType<typeof xoroshiro128plus>,
): Workload['batches'] => {
  const chance = (p: number) => uniformInt(rng, 0, 9999) < p * 10_000;
  const picked = batches
    .flatMap((b) => b.events)
    .filter(() => chance(options.rebatchShare ?? 0.2))
    .map((e) => ({ e, key: uniformInt(rng, 0, 2 ** 30) }))
    .sort((a, b) => a.key - b.key)
    .map(({ e }) => {
      if (!chance(options.conflictShare ?? 0.1)) return e;
      const exponent = currencyExponent(e.currency) ?? 2;
      return { ...e, amount: fromMinorUnits(toMinorUnits(e.amount, exponent) + 1n, exponent) };
    });
  const out: Workload['batches'] = [];
  for (let i = 0; i < picked.length; i += options.batchSize) {
    const n = String(out.length).padStart(5, '0');
    out.push({
      batchId: `rebatch-${options.seed}-${n}`,
      events: picked.slice(i, i + options.batchSize),
    });
  }
  return out;
};
