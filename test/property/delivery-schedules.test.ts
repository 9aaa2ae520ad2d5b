import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FaultKind, SIDE_EFFECT_SITES } from '../../harness/faults.ts';
import type { GeneratedEvent } from '../../harness/generate.ts';
import { referenceModel } from '../../harness/model.ts';
import { currencyExponent } from '../../shared/currencies.ts';
import { fromMinorUnits } from '../../shared/money.ts';
import { createPipeline } from '../support/pipeline.ts';

type Ev = GeneratedEvent;

const eventArb = fc.record({
  orderId: fc.constantFrom('o1', 'o2', 'o3', 'o4', 'o5'),
  customerId: fc.constantFrom('C1', 'C2'),
  status: fc.constantFrom('placed', 'paid', 'shipped', 'delivered', 'cancelled', 'refunded'),
  minor: fc.integer({ min: 0, max: 99_999 }),
  currency: fc.constantFrom('USD', 'EUR', 'JPY', 'KWD'),
  // The id's first character decides most ties on time: ASCII, Latin-1, U+E000–U+FFFF and a
  // supplementary character, where UTF-16 and UTF-8 (DynamoDB's) orders disagree.
  lead: fc.constantFrom('a', 'é', '\uff5e', '\u{1F600}'),
  // Three hours, minute resolution, and half the events on the last minute, where each order's
  // newest event is decided: plenty of ties on time, broken by event id.
  minute: fc.oneof(fc.integer({ min: 0, max: 179 }), fc.constant(179)),
  offset: fc.constantFrom('Z', '+02:00', '-05:00'),
});

const toEventTime = (minute: number, offset: string) => {
  const utc = Date.UTC(2026, 9, 1, 9) + minute * 60_000;
  const shift =
    offset === 'Z' ? 0 : (offset.startsWith('+') ? 1 : -1) * Number(offset.slice(1, 3)) * 3_600_000;
  const local = new Date(utc + shift).toISOString().slice(0, 19);
  return `${local}${offset}`;
};

const streamArb = fc
  .array(fc.array(eventArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 })
  .map((batches) => {
    let n = 0;
    return batches.map((events, b) => ({
      batchId: `batch-${b}`,
      events: events.map(
        (e): Ev => ({
          eventId: `${e.lead}${(n++).toString().padStart(3, '0')}`,
          orderId: e.orderId,
          customerId: e.customerId,
          status: e.status,
          amount: fromMinorUnits(BigInt(e.minor), currencyExponent(e.currency) ?? 2),
          currency: e.currency,
          eventTime: toEventTime(e.minute, e.offset),
        }),
      ),
    }));
  });

const scheduleArb = (batchCount: number) =>
  fc.record({
    // How often each batch is delivered (redeliveries, redrives, replays all look alike).
    copies: fc.array(fc.integer({ min: 1, max: 3 }), {
      minLength: batchCount,
      maxLength: batchCount,
    }),
    order: fc.infiniteStream(fc.nat()),
    invocationSize: fc.integer({ min: 1, max: 4 }),
    faults: fc.array(
      fc.record({
        site: fc.constantFrom(...SIDE_EFFECT_SITES.filter((s) => s !== 'PutObject:rejects')),
        kind: fc.constantFrom<FaultKind>('crash-before', 'crash-after', 'throttle'),
        nth: fc.integer({ min: 1, max: 4 }),
      }),
      { maxLength: 3 },
    ),
  });

describe('any delivery schedule', () => {
  it('gives the reference model’s orders and hourly aggregates, whatever the order, duplicates and crashes', async () => {
    await fc.assert(
      fc.asyncProperty(
        streamArb.chain((stream) => fc.tuple(fc.constant(stream), scheduleArb(stream.length))),
        async ([stream, schedule]) => {
          const p = await createPipeline();
          for (const fault of schedule.faults) p.faults.add(fault);
          const bodies = stream.map((b) => JSON.stringify(b));
          // Build the queue: every copy, shuffled by the generated order.
          const queue = bodies.flatMap((body, i) =>
            Array.from({ length: schedule.copies[i] ?? 1 }, () => body),
          );
          const order = schedule.order;
          for (let i = queue.length - 1; i > 0; i--) {
            const j = (order.next().value ?? 0) % (i + 1);
            [queue[i], queue[j]] = [queue[j] ?? '', queue[i] ?? ''];
          }
          // Invoke in SQS batches; a failed message goes back to the end of the queue.
          let invocations = 0;
          while (queue.length > 0) {
            if (++invocations > 200) throw new Error('the queue never drained');
            const batch = queue
              .splice(0, schedule.invocationSize)
              .map((body, i) => ({ body, messageId: `m-${invocations}-${i}` }));
            const res = await p.ingest(batch);
            const failed = new Set(res.batchItemFailures.map((f) => f.itemIdentifier));
            queue.push(...batch.filter((m) => failed.has(m.messageId)).map((m) => m.body));
          }
          await p.drainAggregates();
          const expected = referenceModel(stream);
          expect(await p.orders()).toEqual(expected.orders);
          expect(await p.hourly()).toEqual(expected.hourly);
          expect(await p.rejects()).toEqual([]);
        },
      ),
      { numRuns: 25 },
    );
  });
});
