/**
 * The local runtime's CloudWatch metrics: what the functions publish in their logs (embedded
 * metric format, as Powertools writes it), what Lambda publishes for each function (invocations,
 * errors, throttles, duration) and what SQS publishes for each queue (its depths, sampled when
 * asked). One store per edge, as metrics are per account and region on AWS: every stack on the
 * edge publishes into it.
 *
 * Datapoints are kept at CloudWatch's standard resolution, one statistic set per minute and
 * series, so a long run costs memory per minute, not per datapoint.
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import * as v from 'valibot';

export type Dimensions = Readonly<Record<string, string>>;

export interface Datum {
  readonly namespace: string;
  readonly name: string;
  readonly dimensions: Dimensions;
  readonly timestampMs: number;
  readonly value: number;
  readonly unit?: string | undefined;
}

/** CloudWatch's statistic set: what every statistic of a period is computed from. */
export interface StatisticSet {
  readonly sampleCount: number;
  readonly sum: number;
  readonly minimum: number;
  readonly maximum: number;
}

export interface MetricId {
  readonly namespace: string;
  readonly name: string;
  readonly dimensions: Dimensions;
}

/** A period's statistics: where it starts, and its set. */
export interface Datapoint {
  readonly timestampMs: number;
  readonly set: StatisticSet;
  readonly unit: string | undefined;
}

const MINUTE_MS = 60_000;
/** How long datapoints are kept: CloudWatch keeps one-minute data 15 days. */
const RETENTION_MS = 15 * 86_400_000;

/** A series' key: CloudWatch tells series apart by namespace, name and the exact dimension set. */
const keyOf = (m: MetricId) =>
  JSON.stringify([
    m.namespace,
    m.name,
    Object.entries(m.dimensions).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  ]);

const merge = (a: StatisticSet | undefined, b: StatisticSet): StatisticSet =>
  a === undefined
    ? b
    : {
        sampleCount: a.sampleCount + b.sampleCount,
        sum: a.sum + b.sum,
        minimum: Math.min(a.minimum, b.minimum),
        maximum: Math.max(a.maximum, b.maximum),
      };

interface Series {
  readonly id: MetricId;
  unit: string | undefined;
  /** Statistic sets by the start of their minute. */
  readonly minutes: Map<number, StatisticSet>;
}

export class MetricStore {
  readonly #series = new Map<string, Series>();

  put(datum: Datum): void {
    const key = keyOf(datum);
    let series = this.#series.get(key);
    if (!series) {
      series = { id: datum, unit: datum.unit, minutes: new Map() };
      this.#series.set(key, series);
    }
    if (datum.unit !== undefined) series.unit = datum.unit;
    const minute = Math.floor(datum.timestampMs / MINUTE_MS) * MINUTE_MS;
    const value = datum.value;
    series.minutes.set(
      minute,
      merge(series.minutes.get(minute), {
        sampleCount: 1,
        sum: value,
        minimum: value,
        maximum: value,
      }),
    );
    this.#prune(series, datum.timestampMs);
  }

  #prune(series: Series, nowMs: number): void {
    for (const minute of series.minutes.keys()) {
      if (minute >= nowMs - RETENTION_MS) break;
      series.minutes.delete(minute);
    }
  }

  /**
   * The statistics of each period of `[startMs, endMs)` that has data, periods counted from
   * `startMs` (as GetMetricStatistics counts them), oldest first.
   */
  statistics(id: MetricId, startMs: number, endMs: number, periodSeconds: number): Datapoint[] {
    const series = this.#series.get(keyOf(id));
    if (!series) return [];
    const periodMs = periodSeconds * 1000;
    const periods = new Map<number, StatisticSet>();
    for (const [minute, set] of series.minutes) {
      if (minute < startMs || minute >= endMs) continue;
      const start = startMs + Math.floor((minute - startMs) / periodMs) * periodMs;
      periods.set(start, merge(periods.get(start), set));
    }
    return [...periods]
      .sort(([a], [b]) => a - b)
      .map(([timestampMs, set]) => ({ timestampMs, set, unit: series.unit }));
  }

  /**
   * The statistics of the minutes that overlap `[fromMs, toMs)`, undefined without data: what an
   * alarm evaluates a period by. At one-minute resolution, a period reaches back up to a minute
   * earlier than it starts.
   */
  window(id: MetricId, fromMs: number, toMs: number): StatisticSet | undefined {
    const series = this.#series.get(keyOf(id));
    let set: StatisticSet | undefined;
    for (const [minute, s] of series?.minutes ?? []) {
      if (minute + MINUTE_MS > fromMs && minute < toMs) set = merge(set, s);
    }
    return set;
  }

  /** The series stored, optionally of one namespace and name. */
  list(filter: { namespace?: string | undefined; name?: string | undefined } = {}): MetricId[] {
    return [...this.#series.values()]
      .map((s) => s.id)
      .filter(
        (id) =>
          (filter.namespace === undefined || id.namespace === filter.namespace) &&
          (filter.name === undefined || id.name === filter.name),
      );
  }
}

/** An EMF line's members: the metrics' values and the dimensions' values are top-level. */
const MembersSchema = v.record(v.string(), v.unknown());

const EmfSchema = v.object({
  _aws: v.object({
    Timestamp: v.number(),
    CloudWatchMetrics: v.array(
      v.object({
        Namespace: v.string(),
        Dimensions: v.array(v.array(v.string())),
        Metrics: v.array(v.object({ Name: v.string(), Unit: v.optional(v.string()) })),
      }),
    ),
  }),
});

/**
 * The datapoints of one log line in CloudWatch's embedded metric format (none for any other
 * line), as CloudWatch Logs extracts them: each metric's value (or each of its values) under
 * each dimension set, the dimensions' values read from the line's members.
 */
export const emfDatapoints = (line: string): Datum[] => {
  if (!line.includes('"CloudWatchMetrics"')) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return [];
  }
  const record = v.safeParse(MembersSchema, parsed);
  const emf = v.safeParse(EmfSchema, parsed);
  if (!record.success || !emf.success) return [];
  const members = record.output;
  const { Timestamp, CloudWatchMetrics } = emf.output._aws;
  return CloudWatchMetrics.flatMap((directive) =>
    directive.Dimensions.flatMap((names) => {
      const dimensions: Record<string, string> = {};
      for (const name of names) {
        const value = members[name];
        // CloudWatch Logs drops a dimension set whose value is missing or not a string.
        if (typeof value !== 'string') return [];
        dimensions[name] = value;
      }
      return directive.Metrics.flatMap((metric) => {
        const value = members[metric.Name];
        const values = Array.isArray(value) ? value : [value];
        return values.flatMap((n) =>
          typeof n === 'number' && Number.isFinite(n)
            ? [
                {
                  namespace: directive.Namespace,
                  name: metric.Name,
                  dimensions,
                  timestampMs: Timestamp,
                  value: n,
                  unit: metric.Unit,
                },
              ]
            : [],
        );
      });
    }),
  );
};

/** Calls `onLine` with each complete line of the stream, characters split across chunks kept whole. */
export const eachLine = (stream: Readable, onLine: (line: string) => void): void => {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  stream.on('data', (chunk: Buffer) => {
    const lines = (rest + decoder.write(chunk)).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  });
  stream.on('end', () => {
    const last = rest + decoder.end();
    if (last !== '') onLine(last);
  });
};
