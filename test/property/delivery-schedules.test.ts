import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FaultKind, SIDE_EFFECT_SITES } from '../../harness/faults.ts';
import type { GeneratedEvent } from '../../harness/generate.ts';
import { referenceModel } from '../../harness/model.ts';
import { currencyExponent } from '../../shared/currencies.ts';
import { fromMinorUnits, toMinorUnits } from '../../shared/money.ts';
import { createPipeline, type Pipeline } from '../support/pipeline.ts';

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

type Schedule = {
  copies: number[];
  order: fc.Stream<number>;
  invocationSize: number;
};

/**
 * Delivers every copy of every body in the schedule's order, in SQS batches of its size; a
 * failed message goes back to the end of the queue, as a redelivery.
 */
const deliverShuffled = async (
  p: Pipeline,
  bodies: readonly string[],
  schedule: Schedule,
  tag = '',
) => {
  const queue = bodies.flatMap((body, i) =>
    Array.from({ length: schedule.copies[i % schedule.copies.length] ?? 1 }, () => body),
  );
  for (let i = queue.length - 1; i > 0; i--) {
    const j = (schedule.order.next().value ?? 0) % (i + 1);
    [queue[i], queue[j]] = [queue[j] ?? '', queue[i] ?? ''];
  }
  let invocations = 0;
  while (queue.length > 0) {
    if (++invocations > 200) throw new Error('the queue never drained');
    const batch = queue
      .splice(0, schedule.invocationSize)
      .map((body, i) => ({ body, messageId: `m${tag}-${invocations}-${i}` }));
    const res = await p.ingest(batch);
    const failed = new Set(res.batchItemFailures.map((f) => f.itemIdentifier));
    queue.push(...batch.filter((m) => failed.has(m.messageId)).map((m) => m.body));
  }
};

describe('any delivery schedule', () => {
  it('gives the reference model’s orders and hourly aggregates, whatever the order, duplicates and crashes', async () => {
    await fc.assert(
      fc.asyncProperty(
        streamArb.chain((stream) => fc.tuple(fc.constant(stream), scheduleArb(stream.length))),
        async ([stream, schedule]) => {
          const p = await createPipeline();
          for (const fault of schedule.faults) p.faults.add(fault);
          await deliverShuffled(
            p,
            stream.map((b) => JSON.stringify(b)),
            schedule,
          );
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

type Change = 'same' | 'amount' | 'status' | 'time' | 'customer';

/** The event as a producer would re-send it: the same, or with one field changed. */
const changed = (e: Ev, change: Change): Ev => {
  const exponent = currencyExponent(e.currency) ?? 2;
  switch (change) {
    case 'same':
      return e;
    case 'amount':
      return { ...e, amount: fromMinorUnits(toMinorUnits(e.amount, exponent) + 1n, exponent) };
    case 'status':
      return { ...e, status: e.status === 'placed' ? 'paid' : 'placed' };
    case 'time':
      return { ...e, eventTime: new Date(Date.parse(e.eventTime) + 60_000).toISOString() };
    case 'customer':
      return { ...e, customerId: 'C9' };
  }
};

/** Re-sends of already sent events under new batch ids, regrouped, some with other content. */
const resendArb = (stream: readonly { events: readonly Ev[] }[]) => {
  const events = stream.flatMap((b) => b.events);
  return fc
    .array(
      fc.record({
        picks: fc.subarray(
          events.map((_, i) => i),
          { minLength: 1, maxLength: Math.min(4, events.length) },
        ),
        changes: fc.array(
          fc.constantFrom<Change>('same', 'same', 'amount', 'status', 'time', 'customer'),
          { minLength: 4, maxLength: 4 },
        ),
      }),
      { minLength: 1, maxLength: 4 },
    )
    .map((resends) =>
      resends.map(({ picks, changes }, k) => ({
        batchId: `resend-${k}`,
        events: picks.map((i, j) => changed(events[i] as Ev, changes[j] ?? 'same')),
      })),
    );
};

describe('re-sent events', () => {
  it('count once whatever batches re-send them, and a conflicting copy is reported and never applied', async () => {
    await fc.assert(
      fc.asyncProperty(
        streamArb.chain((stream) =>
          fc.tuple(
            fc.constant(stream),
            resendArb(stream),
            scheduleArb(stream.length + 4),
            fc.infiniteStream(fc.nat()),
          ),
        ),
        async ([stream, resends, schedule, order]) => {
          const p = await createPipeline();
          for (const fault of schedule.faults) p.faults.add(fault);
          const original = new Map(stream.flatMap((b) => b.events).map((e) => [e.eventId, e]));
          const conflicting = resends.filter((b) =>
            b.events.some((e) => JSON.stringify(e) !== JSON.stringify(original.get(e.eventId))),
          );
          const identical = resends.filter((b) => !conflicting.includes(b));
          // Identical copies race their originals in any order; a conflicting copy comes once
          // its original was applied (else either content may be the first: both are valid).
          await deliverShuffled(
            p,
            [...stream, ...identical].map((b) => JSON.stringify(b)),
            schedule,
          );
          await deliverShuffled(
            p,
            conflicting.map((b) => JSON.stringify(b)),
            { ...schedule, order },
            'c',
          );
          await p.drainAggregates();
          const expected = referenceModel([...stream, ...identical, ...conflicting]);
          expect(await p.orders()).toEqual(expected.orders);
          expect(await p.hourly()).toEqual(expected.hourly);
          const rejects = await p.rejects();
          expect(rejects.map((r) => r.reason)).toEqual(
            Array.from({ length: expected.conflicts }, () => 'event-conflict'),
          );
          expect(await p.pendingBatches()).toEqual([]);
        },
      ),
      { numRuns: 15 },
    );
  });
});
