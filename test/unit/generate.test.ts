import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type GenerateOptions, generateStream } from '../../harness/generate.ts';

const optionsArbitrary: fc.Arbitrary<GenerateOptions> = fc.record({
  orders: fc.integer({ min: 1, max: 12 }),
  hours: fc.integer({ min: 1, max: 3 }),
  seed: fc.integer({ min: 0, max: 2 }),
  start: fc.constantFrom('2026-10-01T00:00:00Z', '2026-10-02T00:00:00Z'),
  batchSize: fc.integer({ min: 1, max: 6 }),
  lateRate: fc.constantFrom(0, 0.3),
  duplicateRate: fc.constantFrom(0, 0.3),
  currencies: fc.constantFrom(['USD', 'EUR', 'GBP'], ['JPY', 'KWD']),
});

/** Each id of a stream with what it stands for: an event's content, a batch's events. */
const contentById = (options: GenerateOptions) => {
  const { batches } = generateStream(options);
  const events = new Map(batches.flatMap((b) => b.events.map((e) => [e.eventId, e] as const)));
  const orders = new Map<string, string[]>();
  for (const e of events.values())
    orders.set(e.orderId, [...(orders.get(e.orderId) ?? []), e.eventId]);
  const batchEvents = new Map(batches.map((b) => [b.batchId, b.events] as const));
  return { events, batchEvents, orders };
};

describe('onceflow generate', () => {
  it('never gives an id of one stream other content in another, whatever the options of either', () => {
    fc.assert(
      fc.property(optionsArbitrary, optionsArbitrary, (a, b) => {
        const [x, y] = [contentById(a), contentById(b)];
        // Sent one after the other, no event and no batch would be refused as a conflict.
        for (const [id, event] of x.events)
          if (y.events.has(id)) expect(y.events.get(id)).toEqual(event);
        for (const [id, events] of x.batchEvents)
          if (y.batchEvents.has(id)) expect(y.batchEvents.get(id)).toEqual(events);
      }),
      { numRuns: 300 },
    );
  });

  it('names a second day or another seed’s orders apart, and keeps the ids of the same stream', () => {
    const day = { orders: 30, hours: 24, seed: 3 };
    const ids = (o: GenerateOptions) => {
      const { orders, batchEvents } = contentById(o);
      return { orders: [...orders.keys()], batches: [...batchEvents.keys()] };
    };
    const first = ids(day);
    expect(ids(day)).toEqual(first);
    for (const other of [
      ids({ ...day, start: '2026-10-02T00:00:00Z' }),
      ids({ ...day, seed: 4 }),
    ]) {
      expect(other.orders.filter((id) => first.orders.includes(id))).toEqual([]);
      expect(other.batches.filter((id) => first.batches.includes(id))).toEqual([]);
    }
    // Another batch size regroups the same orders: their ids stay, the batches' change.
    const regrouped = ids({ ...day, batchSize: 7 });
    expect(regrouped.orders).toEqual(first.orders);
    expect(regrouped.batches.filter((id) => first.batches.includes(id))).toEqual([]);
    expect(first.batches[0]).toMatch(/^gen-s3-[0-9a-f]{6}-000001$/);
  });
});
