/** Terminal rendering shared by the CLI and the local demo: tables and a small bar chart. */
import Table from 'cli-table3';
import type { HourAggregate } from '../shared/aggregate.ts';
import type { FinalizerRun } from '../shared/finalizer.ts';
import type { OrderView } from '../shared/order-state.ts';

/**
 * Characters that can take over a terminal or disguise text: C0 and C1 controls (ESC, CSI, BEL…),
 * DEL, bidi marks and overrides, and the line and paragraph separators.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/**
 * Untrusted text (ids, reject details, bodies) made safe to print: each unsafe character is shown
 * as a visible `\u{…}` escape instead of acting on the terminal. `--json` output never needs it.
 */
export const terminalSafe = (text: string): string =>
  text.replace(UNSAFE, (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}}`);

/**
 * A log line made safe as {@link terminalSafe} makes text, its tabs kept: a tab cannot act on a
 * terminal, and Lambda separates the fields of its `REPORT` lines with them.
 */
export const terminalSafeLine = (line: string): string =>
  line.split('\t').map(terminalSafe).join('\t');

/** The longest id the contract allows; a longer one is cut in tables (`--json` has it whole). */
export const SHOWN_ID_CHARACTERS = 128;

/** `text` cut to `max` characters, saying how long it was: for ids longer than any valid one. */
export const shortened = (text: string, max: number): string =>
  text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;

/** `1 message`, `3 messages`: a count with its noun in the number it needs. */
export const counted = (n: number, noun: string, plural = `${noun}s`): string =>
  `${n} ${n === 1 ? noun : plural}`;

export const ordersTable = (orders: readonly OrderView[]): string => {
  const table = new Table({
    head: ['order', 'customer', 'status', 'amount', 'currency', 'event time'],
    style: { head: [], border: [], compact: true },
  });
  for (const o of orders)
    table.push([
      terminalSafe(o.orderId),
      terminalSafe(o.customerId),
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

/** One line for a finalizer run: the watermark, the hours it finalized, where it stopped. */
export const describeFinalizerRun = (run: FinalizerRun): string => {
  const watermark = run.watermark ? `watermark ${run.watermark}` : 'no watermark yet';
  const hours = run.finalized.map((f) => `${f.hour} (rev ${f.revision})`).join(', ');
  const held =
    run.heldBy === 'pending-batch'
      ? `, held at ${run.nextHour} by a batch in progress`
      : run.heldBy === 'hours-per-run'
        ? `, more from ${run.nextHour} next run`
        : run.nextHour
          ? `; ${run.nextHour} and later still open`
          : '';
  return `finalizer: ${watermark}; ${run.finalized.length ? `finalized ${hours}` : 'nothing to finalize'}${held}`;
};
