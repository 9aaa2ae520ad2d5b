import { describe, expect, it } from 'vitest';
import { batchDigest } from '../../shared/digest.ts';
import { validateBatch } from '../../shared/schema.ts';

const event = (overrides: Record<string, unknown> = {}) => ({
  eventId: 'e-1',
  orderId: '1001',
  customerId: 'C01',
  status: 'placed',
  amount: '25.50',
  currency: 'USD',
  eventTime: '2026-10-01T09:30:00Z',
  ...overrides,
});
const batch = (overrides: Record<string, unknown> = {}) => ({
  batchId: 'b-1',
  events: [event()],
  ...overrides,
});

const reasonOf = (value: unknown) => {
  const result = validateBatch(value);
  return result.ok ? 'ok' : `${result.reason} | ${result.detail}`;
};

describe('the batch contract', () => {
  it('accepts the documented example', () => {
    expect(reasonOf(batch({ source: 'make_orders' }))).toBe('ok');
  });

  it.each([
    ['a batch id with a space', batch({ batchId: 'a b' }), 'batchId'],
    ['a batch id over 128 characters', batch({ batchId: 'x'.repeat(129) }), 'batchId'],
    ['an empty batch id', batch({ batchId: '' }), 'batchId'],
    ['a missing batch id', { events: [event()] }, 'batchId: is required'],
    ['no events', batch({ events: [] }), 'events: must hold at least one event'],
    [
      '501 events',
      batch({ events: Array.from({ length: 501 }, (_, i) => event({ eventId: `e-${i}` })) }),
      'at most 500',
    ],
    ['events that are not an array', batch({ events: {} }), 'events'],
    ['an unknown status', batch({ events: [event({ status: 'lost' })] }), 'events.0.status'],
    ['a number as amount', batch({ events: [event({ amount: 25.5 })] }), 'events.0.amount'],
    [
      'three fraction digits in USD',
      batch({ events: [event({ amount: '1.234' })] }),
      'events.0.amount: 1.234 has more fraction digits than USD allows (ISO 4217 exponent 2)',
    ],
    [
      'fraction digits in JPY',
      batch({ events: [event({ amount: '1500.00', currency: 'JPY' })] }),
      'events.0.amount: 1500.00 has more fraction digits than JPY allows (ISO 4217 exponent 0)',
    ],
    [
      'four fraction digits in KWD',
      batch({ events: [event({ amount: '2.1250', currency: 'KWD' })] }),
      'KWD allows (ISO 4217 exponent 3)',
    ],
    [
      'sixteen integer digits',
      batch({ events: [event({ amount: '1234567890123456' })] }),
      'at most 15 integer digits',
    ],
    [
      'a withdrawn currency',
      batch({ events: [event({ currency: 'BGN' })] }),
      'events.0.currency: BGN is not an active ISO 4217 currency code',
    ],
    [
      'a made-up currency',
      batch({ events: [event({ currency: 'ABC' })] }),
      'ABC is not an active ISO 4217 currency code',
    ],
    [
      'a leap second that is not at the end of a UTC day',
      batch({ events: [event({ eventTime: '2016-12-31T12:59:60Z' })] }),
      'events.0.eventTime: must be an RFC 3339 timestamp with an offset (Z or ±hh:mm), such as 2026-10-01T09:30:00Z; second 60 (a leap second) only exists',
    ],
    [
      'year 0000',
      batch({ events: [event({ eventTime: '0000-12-31T12:00:00Z' })] }),
      'events.0.eventTime: must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999999Z',
    ],
    ['a negative amount', batch({ events: [event({ amount: '-1.00' })] }), 'events.0.amount'],
    ['a lower-case currency', batch({ events: [event({ currency: 'usd' })] }), 'events.0.currency'],
    [
      'a time without offset',
      batch({ events: [event({ eventTime: '2026-10-01T09:30:00' })] }),
      'events.0.eventTime',
    ],
    [
      'a time that is a number',
      batch({ events: [event({ eventTime: 1696152600 })] }),
      'events.0.eventTime',
    ],
    [
      'a missing order id',
      batch({ events: [event({ orderId: undefined })] }),
      'events.0.orderId: is required',
    ],
    ['an unknown event field', batch({ events: [event({ ammount: '1.00' })] }), 'events.0.ammount'],
    ['an unknown batch field', batch({ extra: true }), 'extra'],
    [
      'a lone surrogate in an id',
      batch({ events: [event({ orderId: 'a\ud800' })] }),
      'well-formed Unicode',
    ],
    [
      'a control character in an id',
      batch({ events: [event({ customerId: 'C\u000101' })] }),
      'control characters',
    ],
    [
      'an order id over 128 characters',
      batch({ events: [event({ orderId: 'o'.repeat(129) })] }),
      'events.0.orderId',
    ],
    ['a body that is an array', [batch()], '(body)'],
    ['a body that is null', null, '(body)'],
  ])('rejects %s as a schema violation naming the field', (_, value, where) => {
    const reason = reasonOf(value);
    expect(reason.startsWith('schema-violation | ')).toBe(true);
    expect(reason).toContain(where);
  });

  it.each([
    ['JPY without fraction digits', { amount: '1500', currency: 'JPY' }],
    ['KWD with three fraction digits', { amount: '2.125', currency: 'KWD' }],
    ['CLF with four fraction digits', { amount: '0.0001', currency: 'CLF' }],
    ['USD with fifteen integer digits', { amount: '999999999999999.99' }],
    ['a leap second at the end of a UTC day', { eventTime: '2016-12-31T23:59:60Z' }],
    ['a time in year 0050', { eventTime: '0050-06-15T12:30:00Z' }],
    ['an event id with supplementary characters', { eventId: 'e-\u{1F600}' }],
  ])('accepts %s', (_, change) => {
    expect(reasonOf(batch({ events: [event(change)] }))).toBe('ok');
  });

  it('rejects two events with the same id as duplicate-event-id', () => {
    expect(reasonOf(batch({ events: [event(), event({ orderId: '1002' })] }))).toBe(
      'duplicate-event-id | events.1.eventId: e-1 already appears at events.0',
    );
  });
});

describe('the batch digest', () => {
  const digestOf = (value: unknown) => {
    const result = validateBatch(value);
    if (!result.ok) throw new Error(result.detail);
    return batchDigest(result.batch);
  };

  it('is the same for the same content written differently', () => {
    const a = batch({ events: [event(), event({ eventId: 'e-2', amount: '3.5' })] });
    const b = batch({
      events: [
        event({ eventId: 'e-2', amount: '3.50', eventTime: '2026-10-01T11:30:00+02:00' }),
        event(),
      ],
    });
    expect(digestOf(a)).toBe(digestOf(b));
  });

  it('differs when anything that would be applied differs', () => {
    const base = digestOf(batch());
    for (const change of [
      { amount: '25.51' },
      { status: 'paid' },
      { currency: 'EUR' },
      { orderId: '1002' },
      { customerId: 'C02' },
      { eventTime: '2026-10-01T09:30:01Z' },
      { eventId: 'e-9' },
    ]) {
      expect(digestOf(batch({ events: [event(change)] })), JSON.stringify(change)).not.toBe(base);
    }
    expect(digestOf(batch({ source: 'other' }))).not.toBe(base);
  });
});
