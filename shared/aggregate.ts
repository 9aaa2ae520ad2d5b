/**
 * Hourly aggregate math. Counts and amounts are bigint minor units until they are rendered as
 * exact decimal strings.
 */
import * as v from 'valibot';
import { currencyExponent } from './currencies.ts';
import { fromMinorUnits } from './money.ts';
import type { OrderEvent } from './schema.ts';

/** One (status, currency) cell's increment or total. */
export interface Cell {
  readonly status: string;
  readonly currency: string;
  readonly events: bigint;
  readonly amountMinor: bigint;
}

/**
 * The increments a batch adds to one counter item: one hour and one currency. Keeping a
 * currency per item bounds the item (at most one cell per status, whatever the hour collects
 * over time), so a commit's size and cost never grow with the hour's history.
 */
export interface CounterDelta {
  readonly hour: string;
  readonly currency: string;
  /** One per status present, sorted by status. */
  readonly cells: readonly Cell[];
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Groups events into per-(hour, currency) increments by status, in a deterministic order. */
export const counterDeltas = (events: readonly OrderEvent[]): CounterDelta[] => {
  const items = new Map<
    string,
    {
      hour: string;
      currency: string;
      cells: Map<string, { status: string; currency: string; events: bigint; amountMinor: bigint }>;
    }
  >();
  for (const e of events) {
    const itemKey = `${e.hour}|${e.currency}`;
    const item = items.get(itemKey) ?? { hour: e.hour, currency: e.currency, cells: new Map() };
    items.set(itemKey, item);
    const cell = item.cells.get(e.status) ?? {
      status: e.status,
      currency: e.currency,
      events: 0n,
      amountMinor: 0n,
    };
    cell.events += 1n;
    cell.amountMinor += e.amountMinor;
    item.cells.set(e.status, cell);
  }
  return [...items.values()]
    .sort((a, b) => compareText(a.hour, b.hour) || compareText(a.currency, b.currency))
    .map(({ hour, currency, cells }) => ({
      hour,
      currency,
      cells: [...cells.values()].sort((a, b) => compareText(a.status, b.status)),
    }));
};

/** One counter item (an hour's shard for one currency) as read back from the store. */
export interface CounterShard {
  /** How many committed batch parts touched this item: grows by one per commit. */
  readonly updates: bigint;
  readonly cells: readonly Cell[];
}

export interface StatusTotals {
  events: number;
  amounts: Record<string, string>;
}

/** The published shape of one hour (`aggregates/hourly/date=…/hour=…json`). */
export interface HourAggregate {
  readonly hour: string;
  readonly events: number;
  readonly byStatus: Record<string, StatusTotals>;
  /** Sum of the shards' update counts: grows with every commit that touches the hour. */
  readonly revision: number;
}

/**
 * Counters hold minor units of the currency's ISO 4217 exponent. A code withdrawn from the list
 * while counters still hold it must stay renderable: move it to a withdrawn list, never delete it.
 */
const exponentOf = (currency: string): number => {
  const exponent = currencyExponent(currency);
  if (exponent === undefined) throw new TypeError(`no ISO 4217 exponent for ${currency}`);
  return exponent;
};

/** Sums the shards of one hour. Keys are sorted so equal aggregates serialise identically. */
export const aggregateHour = (hour: string, shards: readonly CounterShard[]): HourAggregate => {
  const totals = new Map<string, Map<string, { events: bigint; amountMinor: bigint }>>();
  let events = 0n;
  let revision = 0n;
  for (const shard of shards) {
    revision += shard.updates;
    for (const cell of shard.cells) {
      if (cell.events === 0n) continue;
      const byCurrency = totals.get(cell.status) ?? new Map();
      totals.set(cell.status, byCurrency);
      const sum = byCurrency.get(cell.currency) ?? { events: 0n, amountMinor: 0n };
      sum.events += cell.events;
      sum.amountMinor += cell.amountMinor;
      byCurrency.set(cell.currency, sum);
      events += cell.events;
    }
  }
  const byStatus: Record<string, StatusTotals> = {};
  for (const status of [...totals.keys()].sort(compareText)) {
    const byCurrency = totals.get(status) ?? new Map();
    const currencies = [...byCurrency.keys()].sort(compareText);
    let statusEvents = 0n;
    const amounts: Record<string, string> = {};
    for (const currency of currencies) {
      const sum = byCurrency.get(currency);
      if (!sum) continue;
      statusEvents += sum.events;
      amounts[currency] = fromMinorUnits(sum.amountMinor, exponentOf(currency));
    }
    byStatus[status] = { events: Number(statusEvents), amounts };
  }
  return { hour, events: Number(events), byStatus, revision: Number(revision) };
};

/** The aggregate's value without bookkeeping: what must match for a rewrite to be pointless. */
const essence = (a: HourAggregate) => JSON.stringify([a.hour, a.events, a.byStatus, a.revision]);

export const sameAggregate = (a: HourAggregate, b: HourAggregate): boolean =>
  essence(a) === essence(b);

/** The contents of an hour object, validated when read back (S3 content is input too). */
export const HourAggregateSchema = v.object({
  hour: v.string(),
  events: v.pipe(v.number(), v.integer(), v.minValue(0)),
  byStatus: v.record(
    v.string(),
    v.object({
      events: v.pipe(v.number(), v.integer(), v.minValue(0)),
      amounts: v.record(v.string(), v.string()),
    }),
  ),
  revision: v.pipe(v.number(), v.integer(), v.minValue(0)),
  computedAt: v.optional(v.string()),
  final: v.optional(v.literal(true)),
  finalizedAt: v.optional(v.string()),
  amendments: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  amendedAt: v.optional(v.string()),
});

export type StoredHourAggregate = v.InferOutput<typeof HourAggregateSchema>;
