/**
 * A reproducible synthetic order stream (NDJSON, one SQS body per line) for demos, tests,
 * benchmarks and chaos runs: orders go through a realistic lifecycle inside the window, and a
 * seed fixes everything, including which batches are duplicated, late or invalid.
 */
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { currencyExponent } from '../shared/currencies.ts';
import { stableHash } from '../shared/digest.ts';

export interface GenerateOptions {
  readonly orders: number;
  readonly hours: number;
  readonly seed: number;
  /** Window start, a whole UTC hour. Default 2026-10-01T00:00:00Z. */
  readonly start?: string;
  /** Events per batch. Default 50. */
  readonly batchSize?: number;
  /** Share of batches sent twice (same id, same content). */
  readonly duplicateRate?: number;
  /** Share of events that arrive some batches after newer ones. */
  readonly lateRate?: number;
  /** Share of extra lines that are invalid bodies. */
  readonly invalidRate?: number;
  /** ISO 4217 codes orders are priced in. Default USD, EUR, GBP. */
  readonly currencies?: readonly string[];
}

export interface GeneratedEvent {
  readonly eventId: string;
  readonly orderId: string;
  readonly customerId: string;
  readonly status: string;
  readonly amount: string;
  readonly currency: string;
  readonly eventTime: string;
}

export interface GeneratedStream {
  /** One SQS message body per line, in sending order. */
  readonly lines: string[];
  /** The distinct valid batches (what must be applied exactly once). */
  readonly batches: { batchId: string; events: GeneratedEvent[] }[];
  readonly stats: {
    batches: number;
    events: number;
    duplicates: number;
    late: number;
    invalid: number;
  };
}

/** The `source` every generated batch carries. */
export const GENERATED_SOURCE = 'onceflow-generate';

const MINUTE = 60_000;
const DEFAULT_CURRENCIES = ['USD', 'EUR', 'GBP'];

/** `cents` hundredths of a unit, written with the currency's ISO 4217 fraction digits. */
const priced = (cents: number, currency: string) => {
  const exponent = currencyExponent(currency) ?? 2;
  const whole = Math.floor(cents / 100);
  if (exponent === 0) return String(whole);
  return `${whole}.${String(cents % 100)
    .padStart(2, '0')
    .padEnd(exponent, '0')
    .slice(0, exponent)}`;
};

/** A valid event to break in one way per invalid kind. */
const sample = (id: string) => ({
  eventId: `${id}-e`,
  orderId: 'x',
  customerId: 'x',
  status: 'placed',
  amount: '1.00',
  currency: 'USD',
  eventTime: '2026-10-01T00:00:00Z',
});

/** Invalid bodies of the kinds producers really send: cut short, empty, unkeyed, wrong values, duplicated ids. */
const INVALID_KINDS = [
  (id: string) => `{"batchId":"${id}","events":[`,
  (id: string) => JSON.stringify({ batchId: id, events: [] }),
  (id: string) => JSON.stringify({ events: [sample(id)] }),
  (id: string) => JSON.stringify({ batchId: id, events: [{ ...sample(id), amount: '-1.00' }] }),
  (id: string) =>
    JSON.stringify({ batchId: id, events: [{ ...sample(id), eventTime: '2026-10-01T00:00:00' }] }),
  (id: string) => JSON.stringify({ batchId: id, events: [sample(id), sample(id)] }),
];

interface Draw {
  int(min: number, max: number): number;
  chance(rate: number): boolean;
}

const pad = (n: number, width: number) => n.toString().padStart(width, '0');

/** An order's statuses: placed, then cancelled, or paid → shipped → delivered → refunded, each step likely. */
const lifecycle = (draw: Draw): string[] => {
  const steps = ['placed'];
  if (draw.chance(0.1)) return [...steps, 'cancelled'];
  if (!draw.chance(0.9)) return steps;
  steps.push('paid');
  if (!draw.chance(0.85)) return steps;
  steps.push('shipped');
  if (!draw.chance(0.9)) return steps;
  steps.push('delivered');
  if (draw.chance(0.05)) steps.push('refunded');
  return steps;
};

type TimedEvent = GeneratedEvent & { t: number };

const DEFAULT_START = '2026-10-01T00:00:00Z';

/**
 * Six hex digits naming what `fields` decide, so that two streams that differ in content never
 * share an id: the same order id with other events, or the same batch id with other events,
 * would be refused as a conflict (a second day generated with another `--start`, or another
 * seed, would be quarantined as conflicts). The same options give the same ids, so sending a
 * stream again is recognised as the duplicate it is.
 */
const tagOf = (fields: readonly unknown[]) =>
  stableHash(JSON.stringify(fields)).toString('hex', 0, 3);

/** What decides the orders and their events (the draws that follow change only the batching). */
const ordersTag = (o: GenerateOptions) =>
  tagOf([o.orders, o.hours, o.seed, o.start ?? DEFAULT_START, o.currencies ?? DEFAULT_CURRENCIES]);

/** Every order's events inside the window, sorted by time. */
const orderEvents = (draw: Draw, options: GenerateOptions): TimedEvent[] => {
  const start = Date.parse(options.start ?? DEFAULT_START);
  const end = start + options.hours * 60 * MINUTE;
  const customers = Math.max(1, Math.ceil(options.orders / 3));
  const width = String(options.orders).length;
  const currencies = options.currencies ?? DEFAULT_CURRENCIES;
  const tag = ordersTag(options);
  const events: TimedEvent[] = [];
  for (let o = 1; o <= options.orders; o++) {
    const orderId = `o-${tag}-${pad(o, width)}`;
    const customerId = `c-${pad(draw.int(1, customers), width)}`;
    const currency = currencies[draw.int(0, currencies.length - 1)] ?? 'USD';
    const amount = priced(draw.int(100, 50_000), currency);
    let t = start + draw.int(0, options.hours * 60 - 1) * MINUTE + draw.int(0, 59) * 1000;
    for (const [step, status] of lifecycle(draw).entries()) {
      if (step > 0) t += draw.int(1, step === 3 ? 600 : 120) * MINUTE;
      if (t >= end) break;
      const eventTime = new Date(t).toISOString().replace('.000Z', 'Z');
      events.push({
        eventId: `${orderId}-${status}`,
        orderId,
        customerId,
        status,
        amount,
        currency,
        eventTime,
        t,
      });
    }
  }
  return events.sort((a, b) => a.t - b.t || (a.eventId < b.eventId ? -1 : 1));
};

/** Late arrivals: an event is sent one to five batches after its neighbours. */
const arrivalOrder = (draw: Draw, events: TimedEvent[], lateRate: number, batchSize: number) => {
  let late = 0;
  const arrival = events.map((e, i) => {
    const delay = draw.chance(lateRate) ? draw.int(1, 5) * batchSize : 0;
    if (delay) late++;
    return { e, at: i + delay + 0.5 * (delay ? 1 : 0) };
  });
  arrival.sort((a, b) => a.at - b.at);
  return { events: arrival.map(({ e: { t: _, ...event } }) => event), late };
};

/** The lines to send: each batch, some again a few lines later, some invalid bodies between. */
const sendingOrder = (
  draw: Draw,
  batches: GeneratedStream['batches'],
  options: GenerateOptions,
  batchTag: string,
) => {
  const lines: string[] = [];
  const pending: { due: number; line: string }[] = [];
  let duplicates = 0;
  let invalid = 0;
  for (const batch of batches) {
    const line = JSON.stringify({
      batchId: batch.batchId,
      source: GENERATED_SOURCE,
      events: batch.events,
    });
    lines.push(line);
    if (draw.chance(options.duplicateRate ?? 0)) {
      duplicates++;
      pending.push({ due: lines.length + draw.int(0, 3), line });
    }
    if (draw.chance(options.invalidRate ?? 0)) {
      invalid++;
      const kind = INVALID_KINDS[draw.int(0, INVALID_KINDS.length - 1)];
      lines.push(kind ? kind(`gen-${batchTag}-bad-${pad(invalid, 6)}`) : '');
    }
    for (const p of pending.filter((p) => p.due <= lines.length)) lines.push(p.line);
    pending.splice(0, pending.length, ...pending.filter((p) => p.due > lines.length));
  }
  for (const p of pending) lines.push(p.line);
  return { lines, duplicates, invalid };
};

export const generateStream = (options: GenerateOptions): GeneratedStream => {
  const rng = xoroshiro128plus(options.seed);
  const int = (min: number, max: number) => uniformInt(rng, min, max);
  const draw: Draw = { int, chance: (rate) => rate > 0 && int(0, 999_999) < rate * 1_000_000 };
  const batchSize = options.batchSize ?? 50;
  // Batches also depend on their size and on which events arrive late.
  const batchTag = `s${options.seed}-${tagOf([ordersTag(options), batchSize, options.lateRate ?? 0])}`;
  const events = orderEvents(draw, options);
  const arrival = arrivalOrder(draw, events, options.lateRate ?? 0, batchSize);
  const batches: GeneratedStream['batches'] = [];
  for (let i = 0; i < arrival.events.length; i += batchSize) {
    batches.push({
      batchId: `gen-${batchTag}-${pad(batches.length + 1, 6)}`,
      events: arrival.events.slice(i, i + batchSize),
    });
  }
  const { lines, duplicates, invalid } = sendingOrder(draw, batches, options, batchTag);
  return {
    lines,
    batches,
    stats: {
      batches: batches.length,
      events: events.length,
      duplicates,
      late: arrival.late,
      invalid,
    },
  };
};
