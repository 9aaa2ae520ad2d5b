/**
 * The reference model, on its own: chaos, the bench and the property tests judge the product
 * against it, so a model wrong in the same way as the product would hide the product's fault.
 * Here it meets the reference stream's published results and each rule of the contract it
 * encodes, in cases small enough to read.
 */
import { describe, expect, it } from 'vitest';
import type { GeneratedEvent } from '../../harness/generate.ts';
import { hourOfEventTime, referenceModel } from '../../harness/model.ts';
import { validateBatch } from '../../shared/schema.ts';
import { expectedHourly, expectedOrders, seedBatches } from '../support/fixtures.ts';

/** A placed USD event of 1.00 for order o1 at 09:10, with the given fields changed. */
const event = (fields: Partial<GeneratedEvent> = {}): GeneratedEvent => ({
  eventId: 'e1',
  orderId: 'o1',
  customerId: 'c1',
  status: 'placed',
  amount: '1.00',
  currency: 'USD',
  eventTime: '2026-10-01T09:10:00Z',
  ...fields,
});

const batches = (...eventsOfEach: GeneratedEvent[][]) =>
  eventsOfEach.map((events, i) => ({ batchId: `b${i}`, events }));

describe('the reference model', () => {
  it('gives the reference stream’s published results', () => {
    const stream = seedBatches().map((body) => {
      const parsed = validateBatch(JSON.parse(body));
      if (!parsed.ok) throw new Error(parsed.detail);
      return parsed.batch;
    });
    const model = referenceModel(stream);
    expect(model.orders).toEqual(expectedOrders());
    expect(model.hourly).toEqual(expectedHourly());
    expect(model.conflicts).toBe(0);
  });

  it('counts an event once however often it comes, with the same content written otherwise', () => {
    const first = event({ amount: '25.50', eventTime: '2026-10-01T09:10:00Z' });
    // The same amount and instant, written with another scale and offset.
    const again = event({ amount: '25.5', eventTime: '2026-10-01T11:10:00+02:00' });
    const model = referenceModel(batches([first], [again], [first]));
    expect(model.conflicts).toBe(0);
    expect(model.hourly).toEqual([
      {
        hour: '2026-10-01T09:00:00Z',
        events: 1,
        byStatus: { placed: { events: 1, amounts: { USD: '25.50' } } },
      },
    ]);
    // The first content stands, as sent.
    expect(model.orders.map((o) => [o.amount, o.eventTime])).toEqual([
      ['25.50', '2026-10-01T09:10:00Z'],
    ]);
  });

  it('keeps the first content of an event and counts one conflict per batch that re-sends it otherwise', () => {
    const first = event();
    const model = referenceModel(
      batches([first], [event({ status: 'paid' })], [event({ amount: '2.00' })], [first]),
    );
    expect(model.conflicts).toBe(2);
    expect(model.orders.map((o) => [o.status, o.amount])).toEqual([['placed', '1.00']]);
    expect(model.hourly[0]?.events).toBe(1);
  });

  it('holds each order’s newest event, down to fractions of a second, whatever the order of arrival', () => {
    const newest = event({ eventId: 'e2', status: 'paid', eventTime: '2026-10-01T09:10:00.5Z' });
    const older = event({ eventId: 'e3', status: 'shipped', eventTime: '2026-10-01T09:10:00.25Z' });
    for (const order of [
      [newest, older],
      [older, newest],
    ])
      expect(referenceModel(batches(order)).orders.map((o) => o.status)).toEqual(['paid']);
  });

  it('breaks a tie on time by the event ids’ UTF-8 bytes, where UTF-16 would order them the other way', () => {
    // U+FF5E is one UTF-16 unit above a surrogate pair's first (D83D), but its UTF-8 bytes (EF)
    // sort below U+1F600's (F0).
    const bmp = event({ eventId: '\uff5e', status: 'paid' });
    const astral = event({ eventId: '\u{1F600}', status: 'shipped' });
    for (const order of [
      [bmp, astral],
      [astral, bmp],
    ])
      expect(referenceModel(batches(order)).orders.map((o) => o.status)).toEqual(['shipped']);
  });

  it('counts refused hours’ events as too late, never applied', () => {
    const late = event({ orderId: 'late' });
    const open = event({ orderId: 'open', eventTime: '2026-10-01T12:10:00Z' });
    const model = referenceModel(batches([late, open]), {
      refusedHours: () => new Set([hourOfEventTime(late.eventTime)]),
    });
    expect(model.tooLate).toBe(1);
    expect(model.orders.map((o) => o.orderId)).toEqual(['open']);
    expect(model.hourly.map((h) => h.hour)).toEqual(['2026-10-01T12:00:00Z']);
  });

  it('files an event under the UTC hour of its instant', () => {
    expect(hourOfEventTime('2026-10-01T01:30:00+02:00')).toBe('2026-09-30T23:00:00Z');
    expect(hourOfEventTime('2026-10-01T09:59:59.999999Z')).toBe('2026-10-01T09:00:00Z');
  });
});
