/** Batches and views for the finished-hours tests: one day, placed USD events of 1.00. */
import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { DayIndexSchema } from '../../shared/day-index.ts';
import { dayIndexKey } from '../../shared/keys.ts';
import type { Pipeline } from './pipeline.ts';

export const DAY = '2026-10-01';
export const H09 = `${DAY}T09:00:00Z`;
export const H10 = `${DAY}T10:00:00Z`;

/** A batch of `placed` USD events at these times (minutes past midnight UTC, 1.00 each). */
export const batch = (...times: string[]) => {
  const batchId = `b-${randomUUID()}`;
  return JSON.stringify({
    batchId,
    events: times.map((t, i) => ({
      eventId: `${batchId}-${i}`,
      orderId: `o-${batchId}-${i}`,
      customerId: 'c-1',
      status: 'placed',
      amount: '1.00',
      currency: 'USD',
      eventTime: `${DAY}T${t}:00Z`,
    })),
  });
};

/** One `placed` USD event of 1.00 at 10:00 of the day: the smallest valid event of an order. */
export const placedEvent = (orderId: string, eventId = 'e1') => ({
  eventId,
  orderId,
  customerId: 'c1',
  status: 'placed' as const,
  amount: '1.00',
  currency: 'USD',
  eventTime: H10,
});

export const apply = async (p: Pipeline, ...bodies: string[]) => {
  await p.deliverUntilDone(bodies);
  await p.drainAggregates();
};

export const objectOf = async (p: Pipeline, hour: string) =>
  (await p.hourObjects()).find((o) => o.body.hour === hour)?.body;

export const dayIndex = async (p: Pipeline) => {
  const text = await p.readText(dayIndexKey(DAY));
  return text === undefined ? undefined : v.parse(DayIndexSchema, JSON.parse(text));
};
