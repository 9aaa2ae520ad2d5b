/**
 * The reference model: what a stream of distinct batches must produce, computed independently
 * of onceflow's code. Each event, identified by (orderId, eventId), counts once with the content
 * it first came with, in the order the batches are given; a later copy with the same content is
 * skipped, one with other content is an event conflict (counted per batch and event). Each
 * order holds its newest counted event. It shares only data with production (the ISO 4217
 * exponents), and its own implementation of the one tie order: event ids compared by their
 * UTF-8 bytes, as DynamoDB compares them.
 */

import { currencyExponent } from '../shared/currencies.ts';
import type { GeneratedEvent } from './generate.ts';

export interface ModelHour {
  readonly hour: string;
  readonly events: number;
  readonly byStatus: Record<string, { events: number; amounts: Record<string, string> }>;
}

const exponent = (currency: string) => {
  const e = currencyExponent(currency);
  if (e === undefined) throw new Error(`the model has no exponent for ${currency}`);
  return e;
};
const minorUnits = (amount: string, currency: string) => {
  const [whole = '0', fraction = ''] = amount.split('.');
  return BigInt(`${whole}${fraction.padEnd(exponent(currency), '0')}`);
};
const decimal = (minor: bigint, currency: string) => {
  const digits = exponent(currency);
  const text = minor.toString().padStart(digits + 1, '0');
  return digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`;
};
/** UTF-8 byte order, computed on the bytes themselves. */
const utf8Greater = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b)) > 0;
/** Event time as a sortable instant: Date for the second, the digits as sent below it. */
const instant = (eventTime: string) => {
  const m = /^(.*?:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/i.exec(eventTime);
  const whole = Date.parse(`${m?.[1] ?? eventTime}${m?.[3] ?? ''}`);
  return { seconds: whole, fraction: (m?.[2] ?? '').padEnd(9, '0') };
};
const later = (a: ReturnType<typeof instant>, b: ReturnType<typeof instant>) =>
  a.seconds > b.seconds || (a.seconds === b.seconds && a.fraction > b.fraction);
const same = (a: ReturnType<typeof instant>, b: ReturnType<typeof instant>) =>
  a.seconds === b.seconds && a.fraction === b.fraction;

/** Two copies of an event mean the same: amounts in minor units, times as instants. */
const sameContent = (a: GeneratedEvent, b: GeneratedEvent) =>
  a.customerId === b.customerId &&
  a.status === b.status &&
  a.currency === b.currency &&
  minorUnits(a.amount, a.currency) === minorUnits(b.amount, b.currency) &&
  same(instant(a.eventTime), instant(b.eventTime));

export interface ModelBatch {
  readonly batchId?: string;
  readonly events: readonly GeneratedEvent[];
}

/** The UTC hour an event time falls in, `2026-10-01T09:00:00Z`. */
export const hourOfEventTime = (eventTime: string) =>
  `${new Date(instant(eventTime).seconds).toISOString().slice(0, 13)}:00:00Z`;

export interface ModelOptions {
  /**
   * The late policy's refusals: the hours of a batch whose events are refused (latePolicy
   * quarantine); none when undefined. Refused events are not applied: not claimed, not counted,
   * never an order's state.
   */
  readonly refusedHours?: (batch: ModelBatch) => ReadonlySet<string> | undefined;
}

export const referenceModel = (batches: readonly ModelBatch[], options: ModelOptions = {}) => {
  const newest = new Map<string, GeneratedEvent>();
  const hours = new Map<string, Map<string, Map<string, { n: number; minor: bigint }>>>();
  const first = new Map<string, GeneratedEvent>();
  const conflicts = new Set<string>();
  const counted: GeneratedEvent[] = [];
  let tooLate = 0;
  for (const [index, batch] of batches.entries()) {
    const refused = options.refusedHours?.(batch);
    for (const e of batch.events) {
      if (refused?.has(hourOfEventTime(e.eventTime))) {
        tooLate++;
        continue;
      }
      const key = JSON.stringify([e.orderId, e.eventId]);
      const seen = first.get(key);
      if (!seen) {
        first.set(key, e);
        counted.push(e);
      } else if (!sameContent(seen, e)) {
        conflicts.add(JSON.stringify([batch.batchId ?? index, e.orderId, e.eventId]));
      }
    }
  }
  for (const e of counted) {
    const t = instant(e.eventTime);
    const current = newest.get(e.orderId);
    const ct = current ? instant(current.eventTime) : undefined;
    if (!ct || later(t, ct) || (same(t, ct) && utf8Greater(e.eventId, current?.eventId ?? '')))
      newest.set(e.orderId, e);
    const hour = hourOfEventTime(e.eventTime);
    const byStatus = hours.get(hour) ?? new Map();
    hours.set(hour, byStatus);
    const byCurrency = byStatus.get(e.status) ?? new Map();
    byStatus.set(e.status, byCurrency);
    const cell = byCurrency.get(e.currency) ?? { n: 0, minor: 0n };
    cell.n++;
    cell.minor += minorUnits(e.amount, e.currency);
    byCurrency.set(e.currency, cell);
  }
  const orders = [...newest.values()]
    .sort((a, b) => (a.orderId < b.orderId ? -1 : 1))
    .map(({ orderId, customerId, status, amount, currency, eventTime }) => ({
      orderId,
      customerId,
      status,
      amount,
      currency,
      eventTime,
    }));
  const hourly: ModelHour[] = [...hours.keys()].sort().map((hour) => {
    const byStatus: ModelHour['byStatus'] = {};
    let events = 0;
    for (const [status, byCurrency] of [...(hours.get(hour) ?? new Map()).entries()].sort()) {
      let n = 0;
      const amounts: Record<string, string> = {};
      for (const [currency, cell] of [...byCurrency.entries()].sort()) {
        n += cell.n;
        amounts[currency] = decimal(cell.minor, currency);
      }
      byStatus[status] = { events: n, amounts };
      events += n;
    }
    return { hour, events, byStatus };
  });
  return { orders, hourly, conflicts: conflicts.size, tooLate };
};
