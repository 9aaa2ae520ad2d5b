/**
 * CloudWatch's metric actions on the local edge, over the metrics the local runtime publishes:
 * `GetMetricStatistics`, `GetMetricData` (metric queries; math refused by name), `ListMetrics`
 * and `PutMetricData`.
 */
import * as v from 'valibot';
import { STATISTICS } from './alarms.ts';
import {
  CloudWatchError,
  DimensionsSchema,
  dimensionsOf,
  invalid,
  type Operation,
  operation,
  Seconds,
  seconds,
} from './cloudwatch-operation.ts';
import type { StatisticSet } from './metrics.ts';

const STATISTIC_OF = {
  SampleCount: (s: StatisticSet) => s.sampleCount,
  Average: (s: StatisticSet) => s.sum / s.sampleCount,
  Sum: (s: StatisticSet) => s.sum,
  Minimum: (s: StatisticSet) => s.minimum,
  Maximum: (s: StatisticSet) => s.maximum,
} as const;

const isStatistic = (name: string): name is keyof typeof STATISTIC_OF => name in STATISTIC_OF;

export const METRIC_OPERATIONS: Record<string, Operation> = {
  GetMetricStatistics: operation(
    v.object({
      Namespace: v.string(),
      MetricName: v.string(),
      Dimensions: DimensionsSchema,
      StartTime: Seconds,
      EndTime: Seconds,
      Period: v.pipe(v.number(), v.integer(), v.minValue(1)),
      Statistics: v.optional(v.array(v.picklist(STATISTICS)), []),
      ExtendedStatistics: v.optional(v.array(v.string()), []),
      Unit: v.optional(v.string()),
    }),
    async (cw, q, nowMs) => {
      if (q.ExtendedStatistics.length > 0) throw invalid('percentiles are not computed locally');
      if (q.Statistics.length === 0)
        throw new CloudWatchError(
          'MissingRequiredParameterException',
          'MissingParameter',
          'Statistics or ExtendedStatistics must be given',
        );
      const metric = {
        namespace: q.Namespace,
        name: q.MetricName,
        dimensions: dimensionsOf(q.Dimensions),
      };
      await cw.sample([metric], nowMs);
      return {
        Label: q.MetricName,
        Datapoints: cw.metrics.statistics(metric, q.StartTime, q.EndTime, q.Period).map((p) => ({
          Timestamp: seconds(p.timestampMs),
          ...Object.fromEntries(q.Statistics.map((s) => [s, STATISTIC_OF[s](p.set)])),
          Unit: p.unit ?? 'None',
        })),
      };
    },
  ),
  GetMetricData: operation(
    v.object({
      MetricDataQueries: v.pipe(
        v.array(
          v.object({
            Id: v.pipe(
              v.string(),
              v.regex(/^[a-z][a-zA-Z0-9_]*$/, 'an Id starts with a lowercase letter'),
            ),
            MetricStat: v.optional(
              v.object({
                Metric: v.object({
                  Namespace: v.string(),
                  MetricName: v.string(),
                  Dimensions: DimensionsSchema,
                }),
                Period: v.pipe(v.number(), v.integer(), v.minValue(1)),
                Stat: v.string(),
                Unit: v.optional(v.string()),
              }),
            ),
            Expression: v.optional(v.string()),
            Label: v.optional(v.string()),
            ReturnData: v.optional(v.boolean(), true),
          }),
        ),
        v.minLength(1),
        v.maxLength(500),
      ),
      StartTime: Seconds,
      EndTime: Seconds,
      ScanBy: v.optional(
        v.picklist(['TimestampDescending', 'TimestampAscending']),
        'TimestampDescending',
      ),
    }),
    async (cw, q, nowMs) => {
      const results = [];
      for (const query of q.MetricDataQueries) {
        if (query.Expression !== undefined || !query.MetricStat)
          throw invalid(`${query.Id}: metric math is not computed locally; give a MetricStat`);
        const { Metric, Period, Stat } = query.MetricStat;
        if (!isStatistic(Stat))
          throw invalid(
            `${query.Id}: ${Stat} is not a standard statistic (percentiles are not computed locally)`,
          );
        const metric = {
          namespace: Metric.Namespace,
          name: Metric.MetricName,
          dimensions: dimensionsOf(Metric.Dimensions),
        };
        await cw.sample([metric], nowMs);
        const points = cw.metrics.statistics(metric, q.StartTime, q.EndTime, Period);
        if (q.ScanBy === 'TimestampDescending') points.reverse();
        if (query.ReturnData)
          results.push({
            Id: query.Id,
            Label: query.Label ?? Metric.MetricName,
            Timestamps: points.map((p) => seconds(p.timestampMs)),
            Values: points.map((p) => STATISTIC_OF[Stat](p.set)),
            StatusCode: 'Complete',
          });
      }
      return { MetricDataResults: results, Messages: [] };
    },
  ),
  ListMetrics: operation(
    v.object({ Namespace: v.optional(v.string()), MetricName: v.optional(v.string()) }),
    (cw, q) => ({
      Metrics: cw.metrics.list({ namespace: q.Namespace, name: q.MetricName }).map((m) => ({
        Namespace: m.namespace,
        MetricName: m.name,
        Dimensions: Object.entries(m.dimensions).map(([Name, Value]) => ({ Name, Value })),
      })),
    }),
  ),
  PutMetricData: operation(
    v.object({
      Namespace: v.string(),
      MetricData: v.pipe(
        v.array(
          v.object({
            MetricName: v.string(),
            Dimensions: DimensionsSchema,
            Timestamp: v.optional(Seconds),
            Value: v.optional(v.number()),
            Values: v.optional(v.array(v.number())),
            Counts: v.optional(v.array(v.number())),
            Unit: v.optional(v.string()),
          }),
        ),
        v.maxLength(1000),
      ),
    }),
    (cw, q, nowMs) => {
      for (const d of q.MetricData) {
        const values = d.Values ?? (d.Value === undefined ? [] : [d.Value]);
        values.forEach((value, i) => {
          for (let n = 0; n < (d.Counts?.[i] ?? 1); n++)
            cw.metrics.put({
              namespace: q.Namespace,
              name: d.MetricName,
              dimensions: dimensionsOf(d.Dimensions),
              timestampMs: d.Timestamp ?? nowMs,
              value,
              unit: d.Unit,
            });
        });
      }
      return {};
    },
  ),
};
