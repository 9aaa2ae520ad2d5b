/** The benchmark's workload: one generated stream, delivered three ways. */
import { randomUUID } from 'node:crypto';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
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
  return { options, batches, events, hours, clean, duplicates, duplicated, crashBatches };
};
