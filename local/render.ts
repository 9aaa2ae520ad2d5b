/** Terminal rendering shared by the CLI and the local demo: tables and a small bar chart. */
import Table from 'cli-table3';
import type { HourAggregate } from '../shared/aggregate.ts';
import type { OrderView } from '../shared/order-state.ts';

export const ordersTable = (orders: readonly OrderView[]): string => {
  const table = new Table({
    head: ['order', 'customer', 'status', 'amount', 'currency', 'event time'],
    style: { head: [], border: [], compact: true },
  });
  for (const o of orders)
    table.push([
      o.orderId,
      o.customerId,
      o.status,
      { hAlign: 'right', content: o.amount },
      o.currency,
      o.eventTime,
    ]);
  return table.toString();
};

export const hourlyTable = (hours: readonly HourAggregate[]): string => {
  const table = new Table({
    head: ['hour (UTC)', 'events', 'status', 'events', 'amounts', 'rev'],
    style: { head: [], border: [], compact: true },
  });
  for (const h of hours) {
    const statuses = Object.entries(h.byStatus);
    statuses.forEach(([status, totals], i) => {
      const amounts = Object.entries(totals.amounts)
        .map(([currency, amount]) => `${amount} ${currency}`)
        .join(', ');
      table.push(
        i === 0
          ? [
              { rowSpan: statuses.length, content: h.hour },
              { rowSpan: statuses.length, hAlign: 'right', content: String(h.events) },
              status,
              { hAlign: 'right', content: String(totals.events) },
              amounts,
              { rowSpan: statuses.length, hAlign: 'right', content: String(h.revision) },
            ]
          : [status, { hAlign: 'right', content: String(totals.events) }, amounts],
      );
    });
  }
  return table.toString();
};

/** Events per hour as horizontal bars, scaled to `width` characters. */
export const eventsChart = (
  hours: readonly Pick<HourAggregate, 'hour' | 'events'>[],
  width = 40,
): string => {
  const max = Math.max(1, ...hours.map((h) => h.events));
  return hours
    .map((h) => {
      const bar = '█'.repeat(Math.max(h.events > 0 ? 1 : 0, Math.round((h.events / max) * width)));
      return `${h.hour.slice(0, 13).replace('T', ' ')}h │${bar} ${h.events}`;
    })
    .join('\n');
};
