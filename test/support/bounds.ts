/**
 * Valid batches at the contract's bounds, as bodies plus the events the reference model needs.
 * Every batch here is one the schema admits: each must apply exactly once, first time.
 */
import fc from 'fast-check';
import type { GeneratedEvent } from '../../harness/generate.ts';
import { CURRENCIES, currencyExponent } from '../../shared/currencies.ts';
import { MAX_EVENTS_PER_BATCH, ORDER_STATUSES } from '../../shared/schema.ts';

export interface BoundBatch {
  readonly batchId: string;
  readonly events: GeneratedEvent[];
  readonly body: string;
}

const HOUR = 3_600_000;
const START = Date.parse('2026-10-01T00:00:00Z');

/** A valid amount for the currency: `n` whole units plus a fraction using every allowed digit. */
export const amountFor = (currency: string, n: number): string => {
  const exponent = currencyExponent(currency) ?? 2;
  return exponent === 0 ? String(n) : `${n}.${'7'.repeat(exponent)}`;
};

const time = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** JSON with every non-ASCII character escaped, as Python's json.dumps writes it by default. */
const asciiJson = (value: unknown) =>
  JSON.stringify(value).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

export const batchOf = (
  batchId: string,
  events: GeneratedEvent[],
  pad = 0,
  ascii = false,
): BoundBatch => {
  const json = (ascii ? asciiJson : JSON.stringify)({ batchId, events });
  // JSON allows whitespace anywhere between tokens: padding keeps the batch valid.
  return { batchId, events, body: `${json}${' '.repeat(pad)}` };
};

/** 500 events, each in an hour of its own and a currency of its own: 500 counter items. */
export const widestBatch = (prefix: string): BoundBatch =>
  batchOf(
    `${prefix}-widest`,
    Array.from({ length: MAX_EVENTS_PER_BATCH }, (_, i) => {
      const currency = CURRENCIES[i % CURRENCIES.length] ?? 'USD';
      return {
        eventId: `${prefix}-w-${i}`,
        orderId: `${prefix}-wo-${i % 97}`,
        customerId: 'C',
        status: ORDER_STATUSES[i % ORDER_STATUSES.length] ?? 'placed',
        amount: amountFor(currency, i),
        currency,
        eventTime: time(START + i * HOUR + (i % 60) * 60_000),
      };
    }),
  );

/**
 * 500 events of one order with 128-character ids, then the same order again in four more such
 * batches: one order's claims in ten writes per batch, and its item holding 2,500 of them.
 */
export const oneLongOrder = (prefix: string, batches = 5): BoundBatch[] =>
  Array.from({ length: batches }, (_, b) =>
    batchOf(
      `${prefix}-long-${b}`,
      Array.from({ length: MAX_EVENTS_PER_BATCH }, (_, i) => ({
        eventId: `${prefix}-${b}-${i}-`.padEnd(128, 'e'),
        orderId: `${prefix}-`.padEnd(128, 'o'),
        customerId: 'C',
        status: ORDER_STATUSES[i % ORDER_STATUSES.length] ?? 'placed',
        amount: amountFor('EUR', i),
        currency: 'EUR',
        eventTime: time(START + b * HOUR + i * 1000),
      })),
    ),
  );

/** Every (status, currency) cell in one hour, one event each, split into batches of at most 500. */
export const everyCellOfOneHour = (prefix: string): BoundBatch[] => {
  const events = ORDER_STATUSES.flatMap((status, s) =>
    CURRENCIES.map((currency, c) => ({
      eventId: `${prefix}-c-${s}-${c}`,
      orderId: `${prefix}-co-${c}`,
      customerId: 'C',
      status,
      amount: amountFor(currency, s * 1000 + c),
      currency,
      // Later statuses later in the hour, so each order ends in its last status.
      eventTime: time(START + 5 * HOUR + s * 60_000 + c * 100),
    })),
  );
  const batches: BoundBatch[] = [];
  for (let i = 0; i < events.length; i += MAX_EVENTS_PER_BATCH) {
    batches.push(batchOf(`${prefix}-cells-${i}`, events.slice(i, i + MAX_EVENTS_PER_BATCH)));
  }
  return batches;
};

/** A hundred batches, each adding (status, currency) pairs that the hour has not seen yet. */
export const growingHour = (prefix: string, batches = 100): BoundBatch[] => {
  const cells = ORDER_STATUSES.flatMap((status) =>
    CURRENCIES.map((currency) => ({ status, currency })),
  );
  const perBatch = Math.floor(cells.length / batches);
  return Array.from({ length: batches }, (_, b) =>
    batchOf(
      `${prefix}-grow-${b}`,
      cells.slice(b * perBatch, (b + 1) * perBatch).map(({ status, currency }, i) => ({
        eventId: `${prefix}-g-${b}-${i}`,
        orderId: `${prefix}-go-${b}-${i}`,
        customerId: 'C',
        status,
        amount: amountFor(currency, b + i),
        currency,
        eventTime: time(START + 7 * HOUR + b * 1000),
      })),
    ),
  );
};

/** 500 events with the longest ids the contract allows, padded to exactly `bytes`. */
export const bodyOfSize = (prefix: string, bytes: number): BoundBatch => {
  // Supplementary characters, escaped as \ud83d\ude00: 12 bytes of JSON for one character.
  const long = (tag: string, i: number) => `${tag}${i}-`.padEnd(128 - 20, 'x') + '😀'.repeat(10);
  const events = Array.from({ length: MAX_EVENTS_PER_BATCH }, (_, i) => ({
    eventId: long(`${prefix}-e`, i),
    orderId: long(`${prefix}-o`, i % 50),
    customerId: long('c', i),
    status: 'placed',
    amount: '123456789012345.99',
    currency: 'USD',
    eventTime: '2026-10-01T09:30:00.123456789+00:00',
  }));
  const unpadded = batchOf(`${prefix}-big`, events, 0, true);
  const size = Buffer.byteLength(unpadded.body, 'utf8');
  if (size > bytes) throw new Error(`the batch is already ${size} bytes, over ${bytes}`);
  return batchOf(`${prefix}-big`, events, bytes - size, true);
};

/** ASCII, U+FF5E and U+1F600: JavaScript's order puts the last below the second. */
export const TIE_IDS = ['e-a', 'e-\uff5e', 'e-\u{1F600}'] as const;
export const PERMUTATIONS = [
  [0, 1, 2],
  [0, 2, 1],
  [1, 0, 2],
  [1, 2, 0],
  [2, 0, 1],
  [2, 1, 0],
] as const;
/** Ways to cut three events, in arrival order, into consecutive batches. */
const CUTS = [[3], [1, 2], [2, 1], [1, 1, 1]] as const;

/**
 * Three events of one order at the same instant, ids mixing ASCII, U+E000–U+FFFF and a
 * supplementary character, in every arrival order and every batching: 24 orders in all. The
 * winner must be the id that is greatest in UTF-8 byte order, `e-😀`, for every one of them.
 */
export const tieScenarios = (prefix: string): BoundBatch[] =>
  PERMUTATIONS.flatMap((order, p) =>
    CUTS.flatMap((cut, c) => {
      const orderId = `${prefix}-tie-${p}-${c}`;
      const events = order.map((i) => ({
        eventId: TIE_IDS[i] ?? '',
        orderId,
        customerId: 'C',
        status: ORDER_STATUSES[i] ?? 'placed',
        amount: `${i + 1}.00`,
        currency: 'EUR',
        eventTime: '2026-10-01T11:00:00.5Z',
      }));
      let at = 0;
      return cut.map((size, k) => {
        const batch = batchOf(`${orderId}-b${k}`, events.slice(at, at + size));
        at += size;
        return batch;
      });
    }),
  );

/** Id characters that mix ASCII, Latin-1, U+E000–U+FFFF and a supplementary character. */
const idChars = fc.constantFrom('a', 'Z', '9', '-', 'é', '\uff5e', '\u{1F600}');
const id = (index: number) =>
  fc.string({ unit: idChars, maxLength: 60 }).map((s) => `${index}-${s}`.slice(0, 128));

const event = (index: number) =>
  fc
    .record({
      eventId: id(index),
      orderId: id(index % 7),
      customerId: id(index),
      status: fc.constantFrom(...ORDER_STATUSES),
      currency: fc.constantFrom(...CURRENCIES),
      whole: fc.bigInt({ min: 0n, max: 10n ** 15n - 1n }),
      fraction: fc.nat({ max: 9999 }),
      time: fc.date({
        min: new Date('0001-01-01T00:00:00Z'),
        max: new Date('9999-12-31T22:59:59Z'),
        noInvalidDate: true,
      }),
    })
    .map(({ whole, fraction, time, currency, ...rest }) => {
      const digits = currencyExponent(currency) ?? 0;
      const frac = String(fraction).padStart(4, '0').slice(0, digits);
      return {
        ...rest,
        currency,
        amount: digits === 0 ? String(whole) : `${whole}.${frac}`,
        eventTime: time.toISOString(),
      };
    });

/**
 * Any batch the contract admits, up to its bounds: 1–500 events (sizes drawn as `sizes`
 * says), ids up to 128 characters of mixed planes, every status and active currency, amounts
 * up to 15 integer digits with the currency's fraction digits, times from year 0001 to 9999.
 */
export const validBatchArbitrary = (
  batchId: string,
  sizes: fc.Arbitrary<number> = fc.integer({ min: 1, max: MAX_EVENTS_PER_BATCH }),
) =>
  sizes
    .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => event(i))))
    .map((events) => ({ batchId, events }));
