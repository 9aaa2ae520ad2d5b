/**
 * The reference model: what a stream of distinct batches must produce, computed independently
 * of onceflow's code (each batch counted once, each order holding its newest event).
 */
import type { GeneratedEvent } from '../cli/generate.ts';

export interface ModelHour {
  readonly hour: string;
  readonly events: number;
  readonly byStatus: Record<string, { events: number; amounts: Record<string, string> }>;
}

const cents = (amount: string) => {
  const [whole = '0', fraction = ''] = amount.split('.');
  return BigInt(whole) * 100n + BigInt(fraction.padEnd(2, '0'));
};
const decimal = (minor: bigint) => `${minor / 100n}.${(minor % 100n).toString().padStart(2, '0')}`;

export const referenceModel = (batches: readonly { events: readonly GeneratedEvent[] }[]) => {
  const newest = new Map<string, GeneratedEvent>();
  const hours = new Map<string, Map<string, Map<string, { n: number; minor: bigint }>>>();
  for (const e of batches.flatMap((b) => b.events)) {
    const t = Date.parse(e.eventTime);
    const current = newest.get(e.orderId);
    const ct = current ? Date.parse(current.eventTime) : Number.NEGATIVE_INFINITY;
    if (!current || t > ct || (t === ct && e.eventId > current.eventId)) newest.set(e.orderId, e);
    const hour = `${new Date(t).toISOString().slice(0, 13)}:00:00Z`;
    const byStatus = hours.get(hour) ?? new Map();
    hours.set(hour, byStatus);
    const byCurrency = byStatus.get(e.status) ?? new Map();
    byStatus.set(e.status, byCurrency);
    const cell = byCurrency.get(e.currency) ?? { n: 0, minor: 0n };
    cell.n++;
    cell.minor += cents(e.amount);
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
        amounts[currency] = decimal(cell.minor);
      }
      byStatus[status] = { events: n, amounts };
      events += n;
    }
    return { hour, events, byStatus };
  });
  return { orders, hourly };
};
