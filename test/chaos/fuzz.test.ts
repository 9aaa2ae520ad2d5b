import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { referenceModel } from '../../harness/model.ts';
import { validBatchArbitrary } from '../support/bounds.ts';
import { createPipeline } from '../support/pipeline.ts';

const validEvent = (n: number) => ({
  eventId: `e-${n}`,
  orderId: `o-${n}`,
  customerId: 'C1',
  status: 'placed',
  amount: '1.00',
  currency: 'USD',
  eventTime: '2026-10-01T09:00:00Z',
});
const validBatch = (n: number) => ({ batchId: `fuzz-${n}`, events: [validEvent(n)] });
const nonString = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
);
const EVENT_FIELDS = [
  'eventId',
  'orderId',
  'customerId',
  'status',
  'amount',
  'currency',
  'eventTime',
] as const;

/** Bodies that are invalid by construction, each of a kind the contract must refuse. */
const malformed = fc.oneof(
  // Not JSON at all, or JSON cut short.
  fc.string({ maxLength: 80 }).filter((s) => {
    try {
      JSON.parse(s);
      return false;
    } catch {
      return true;
    }
  }),
  fc.integer({ min: 1, max: 120 }).map((n) => JSON.stringify(validBatch(1)).slice(0, n)),
  // Valid JSON of the wrong shape.
  fc
    .jsonValue()
    .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v) || !('events' in v))
    .map((v) => JSON.stringify(v)),
  // Wrong types and missing fields.
  fc
    .tuple(fc.constantFrom(...EVENT_FIELDS), nonString)
    .map(([field, value]) =>
      JSON.stringify({ ...validBatch(2), events: [{ ...validEvent(2), [field]: value }] }),
    ),
  fc.constantFrom(...EVENT_FIELDS).map((field) => {
    const { [field]: _, ...rest } = validEvent(3);
    return JSON.stringify({ ...validBatch(3), events: [rest] });
  }),
  nonString.map((v) => JSON.stringify({ ...validBatch(4), batchId: v })),
  nonString
    .filter((v) => !Array.isArray(v) || v.length === 0)
    .map((v) => JSON.stringify({ ...validBatch(5), events: v })),
  // Extra-long strings, invalid unicode, numbers as amounts, dates without offsets, duplicate ids.
  fc
    .integer({ min: 129, max: 400 })
    .map((n) => JSON.stringify({ ...validBatch(6), batchId: 'x'.repeat(n) })),
  fc
    .integer({ min: 129, max: 400 })
    .map((n) =>
      JSON.stringify({ ...validBatch(7), events: [{ ...validEvent(7), orderId: 'o'.repeat(n) }] }),
    ),
  fc
    .constantFrom('\\ud800', '\\udfff', 'a\\ud83d')
    .map((bad) => JSON.stringify(validBatch(8)).replace('"o-8"', `"o-8${bad}"`)),
  fc
    .double({ min: 0, max: 1e6, noNaN: true })
    .map((amount) => JSON.stringify({ ...validBatch(9), events: [{ ...validEvent(9), amount }] })),
  fc.date({ noInvalidDate: true }).map((d) =>
    JSON.stringify({
      ...validBatch(10),
      events: [{ ...validEvent(10), eventTime: d.toISOString().replace('Z', '') }],
    }),
  ),
  fc.constant(
    JSON.stringify({
      ...validBatch(11),
      events: [validEvent(11), { ...validEvent(12), eventId: 'e-11' }],
    }),
  ),
  fc
    .string({ maxLength: 12 })
    .filter(
      (s) =>
        s !== '' &&
        !['placed', 'paid', 'shipped', 'delivered', 'cancelled', 'refunded'].includes(s),
    )
    .map((status) =>
      JSON.stringify({ ...validBatch(13), events: [{ ...validEvent(13), status }] }),
    ),
  // Just past the contract's bounds: one event too many, a digit too many, a code not in ISO 4217,
  // a leap second where none can be, year 0000.
  fc.constant(
    JSON.stringify({
      ...validBatch(15),
      events: Array.from({ length: 501 }, (_, i) => ({ ...validEvent(15), eventId: `e-${i}` })),
    }),
  ),
  fc
    .constantFrom(
      { amount: '1234567890123456' },
      { amount: '1.5', currency: 'JPY' },
      { amount: '1.2345', currency: 'KWD' },
      { amount: '1.001' },
      { currency: 'BGN' },
      { currency: 'XAU' },
      { currency: 'QQQ' },
      { eventTime: '2026-10-01T09:59:60Z' },
      { eventTime: '0000-01-01T00:00:00Z' },
      { eventTime: '0001-01-01T00:00:00+00:01' },
    )
    .map((change) =>
      JSON.stringify({ ...validBatch(16), events: [{ ...validEvent(16), ...change }] }),
    ),
);

/**
 * The neighbours: valid batches drawn up to the contract's bounds, mostly small, about one in
 * ten with 400–500 events.
 */
const neighbours = (count: number) =>
  fc
    .sample(
      validBatchArbitrary(
        'n',
        fc.oneof(
          { weight: 9, arbitrary: fc.integer({ min: 1, max: 20 }) },
          { weight: 1, arbitrary: fc.integer({ min: 400, max: 500 }) },
        ),
      ),
      { numRuns: count, seed: 2026 },
    )
    .map((batch, k) => ({ ...batch, batchId: `neighbour-${k + 1}` }));

describe('fuzzing the ingest handler with malformed bodies', () => {
  it('quarantines 10,000 malformed bodies with a reason, applies their neighbours and never fails a whole batch', {
    timeout: 600_000,
  }, async () => {
    const p = await createPipeline();
    const bodies = fc.sample(malformed, { numRuns: 10_000, seed: 2026 });
    // Two bodies over 1 MiB as well (too big to generate ten thousand times).
    bodies.push(
      JSON.stringify({ ...validBatch(14), padding: 'x'.repeat(1024 * 1024) }),
      `{"batchId":"${'y'.repeat(1024 * 1024 + 1)}"`,
    );
    const valid = neighbours(Math.ceil(bodies.length / 99));
    let quarantinedBodies = 0;
    for (let i = 0; i < bodies.length; i += 99) {
      const chunk = bodies.slice(i, i + 99);
      let deliveries = [
        ...chunk.map((body, j) => ({ body, messageId: `bad-${i + j}` })),
        { body: JSON.stringify(valid[i / 99]), messageId: `neighbour-${i / 99}` },
      ];
      let res = await p.ingest(deliveries);
      // Never the whole batch: a malformed body fails nothing but itself, and not even that.
      expect(res.batchItemFailures.length).toBeLessThan(deliveries.length);
      // A record that failed for a busy machine's sake (a request timing out) is redelivered,
      // as SQS would; a failure a body causes would fail every round.
      for (let round = 0; res.batchItemFailures.length > 0 && round < 5; round++) {
        const failed = new Set(res.batchItemFailures.map((f) => f.itemIdentifier));
        deliveries = deliveries.filter((d) => failed.has(d.messageId));
        res = await p.ingest(deliveries.map((d) => ({ ...d, receiveCount: round + 2 })));
      }
      expect(res.batchItemFailures).toEqual([]);
      quarantinedBodies += chunk.length;
    }
    // Neighbours drawn independently may share an (orderId, eventId) with other content: each
    // such copy is an event conflict, reported once; the first content stands, as in the model.
    const model = referenceModel(valid);
    const all = await p.rejects();
    const rejects = all.filter((r) => r.reason !== 'event-conflict');
    expect(rejects).toHaveLength(quarantinedBodies);
    expect(all.length - rejects.length).toBe(model.conflicts);
    const reasons = new Set(rejects.map((r) => r.reason));
    expect([...reasons].sort()).toEqual([
      'duplicate-event-id',
      'invalid-json',
      'oversize',
      'schema-violation',
    ]);
    expect(rejects.every((r) => (r.detail ?? '').length > 0)).toBe(true);
    // Only the neighbours reached the table, exactly as the reference model says.
    expect(valid.some((b) => b.events.length >= 400)).toBe(true);
    expect(await p.orders()).toEqual(model.orders);
    const ledger = await p.ledgerBatches();
    expect(ledger.pending).toEqual([]);
    expect(ledger.applied.sort()).toEqual(valid.map((b) => b.batchId).sort());
  });
});
