import type { OrderEvent } from './schema.ts';

/**
 * Newest wins: the greater (event time, event id) pair. The event id breaks ties so the
 * winner does not depend on arrival order.
 */
export const isNewer = (
  a: Pick<OrderEvent, 'instant' | 'eventId'>,
  b: Pick<OrderEvent, 'instant' | 'eventId'>,
): boolean => a.instant > b.instant || (a.instant === b.instant && a.eventId > b.eventId);

/** The newest event of each order in a batch: one write per order instead of one per event. */
export const newestPerOrder = (events: readonly OrderEvent[]): OrderEvent[] => {
  const newest = new Map<string, OrderEvent>();
  for (const event of events) {
    const current = newest.get(event.orderId);
    if (!current || isNewer(event, current)) newest.set(event.orderId, event);
  }
  return [...newest.values()].sort((a, b) => (a.orderId < b.orderId ? -1 : 1));
};

/** What an order looks like to readers (the CLI, the expected files). */
export interface OrderView {
  readonly orderId: string;
  readonly customerId: string;
  readonly status: string;
  readonly amount: string;
  readonly currency: string;
  readonly eventTime: string;
}
