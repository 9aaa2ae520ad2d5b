/**
 * The reference stream moved into a namespace of its own (ids prefixed, times shifted by whole
 * days), so several scenarios can share one deployed stack without seeing each other.
 */
import type { HourAggregate } from '../../shared/aggregate.ts';
import type { OrderView } from '../../shared/order-state.ts';
import { expectedHourly, expectedOrders, seedBatches } from '../support/fixtures.ts';
import { parseBatch } from '../support/json.ts';

const DAY = 86_400_000;
let counter = 0;

const shift = (time: string, days: number) =>
  new Date(Date.parse(time) + days * DAY).toISOString().replace('.000Z', 'Z');

export interface Scenario {
  readonly prefix: string;
  readonly batches: string[];
  readonly expectedOrders: OrderView[];
  readonly expectedHourly: Pick<HourAggregate, 'hour' | 'events' | 'byStatus'>[];
  /** This scenario's orders and hours out of everything the stack holds. */
  readonly own: {
    orders: (all: readonly OrderView[]) => OrderView[];
    hours: (all: readonly HourAggregate[]) => Pick<HourAggregate, 'hour' | 'events' | 'byStatus'>[];
  };
}

export const scenario = (): Scenario => {
  const n = ++counter;
  const prefix = `s${process.pid}x${Date.now().toString(36)}x${n}`;
  // A day of its own per scenario (up to ~50 years of them), far from any real data.
  const days = (Date.now() % 10_000) * 2 + n;
  const id = (value: string) => `${prefix}-${value}`;
  const batches = seedBatches().map((line) => {
    const batch = parseBatch(line);
    return JSON.stringify({
      ...batch,
      batchId: id(batch.batchId),
      events: batch.events.map((e) => ({
        ...e,
        eventId: id(e.eventId ?? ''),
        orderId: id(e.orderId ?? ''),
        eventTime: shift(e.eventTime ?? '', days),
      })),
    });
  });
  const hours = expectedHourly().map((h) => ({ ...h, hour: shift(h.hour, days) }));
  const hourSet = new Set(hours.map((h) => h.hour));
  return {
    prefix,
    batches,
    expectedOrders: expectedOrders().map((o) => ({
      ...o,
      orderId: id(o.orderId),
      eventTime: shift(o.eventTime, days),
    })),
    expectedHourly: hours,
    own: {
      orders: (all) => all.filter((o) => o.orderId.startsWith(`${prefix}-`)),
      hours: (all) =>
        all
          .filter((h) => hourSet.has(h.hour))
          .map(({ hour, events, byStatus }) => ({ hour, events, byStatus })),
    },
  };
};
