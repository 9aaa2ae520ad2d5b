/**
 * A stack's CloudWatch metric alarms as the local runtime keeps them: read from the template
 * (`AWS::CloudWatch::Alarm`) or put through the API, evaluated against the edge's metrics
 * (`metrics.ts`) each time they are read, with their actions' switch and their state history.
 *
 * What the edge evaluates: one metric with a standard statistic against a static threshold, over
 * the alarm's evaluation periods ending at the moment of asking, at one-minute resolution, with
 * `DatapointsToAlarm` and `TreatMissingData` as CloudWatch applies them. Metric math, percentile
 * statistics and anomaly detection are refused by name, not evaluated wrongly.
 */
import * as v from 'valibot';
import { cloudWatchTime, noDataReason, thresholdReason } from './alarm-reasons.ts';
import type { MetricId, StatisticSet } from './metrics.ts';
import { asRecord, physicalName, type ResourceEntries, UnresolvableError } from './template.ts';

export const STATISTICS = ['SampleCount', 'Average', 'Sum', 'Minimum', 'Maximum'] as const;
export const COMPARISONS = [
  'GreaterThanOrEqualToThreshold',
  'GreaterThanThreshold',
  'LessThanThreshold',
  'LessThanOrEqualToThreshold',
] as const;
export const MISSING_DATA = ['breaching', 'notBreaching', 'ignore', 'missing'] as const;
export type AlarmState = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';
export const ALARM_STATES = ['OK', 'ALARM', 'INSUFFICIENT_DATA'] as const;

/** A number as CloudFormation and the query protocol may give it: a number, or its text. */
const numeric = v.union([
  v.number(),
  v.pipe(v.string(), v.regex(/^-?\d+(\.\d+)?$/), v.transform(Number)),
]);
const flag = v.union([
  v.boolean(),
  v.pipe(
    v.picklist(['true', 'false']),
    v.transform((s) => s === 'true'),
  ),
]);
const actions = v.optional(v.array(v.string()), []);

/**
 * A metric alarm, as `PutMetricAlarm` takes it and `AWS::CloudWatch::Alarm` declares it (the
 * same names): what the edge cannot evaluate fails here, naming it.
 */
export const MetricAlarmSchema = v.pipe(
  v.object({
    AlarmName: v.pipe(v.string(), v.minLength(1), v.maxLength(255)),
    AlarmDescription: v.optional(v.pipe(v.string(), v.maxLength(1024))),
    ActionsEnabled: v.optional(flag, true),
    OKActions: actions,
    AlarmActions: actions,
    InsufficientDataActions: actions,
    MetricName: v.pipe(v.string(), v.minLength(1)),
    Namespace: v.pipe(v.string(), v.minLength(1)),
    Statistic: v.picklist(
      STATISTICS,
      'a standard statistic (percentiles are not evaluated locally)',
    ),
    Dimensions: v.optional(
      v.pipe(v.array(v.object({ Name: v.string(), Value: v.string() })), v.maxLength(30)),
      [],
    ),
    Period: v.pipe(
      numeric,
      v.check(
        (p) => [10, 20, 30].includes(p) || (p >= 60 && p % 60 === 0),
        'Period must be 10, 20, 30 or a multiple of 60',
      ),
    ),
    EvaluationPeriods: v.pipe(numeric, v.integer(), v.minValue(1)),
    DatapointsToAlarm: v.optional(v.pipe(numeric, v.integer(), v.minValue(1))),
    Threshold: numeric,
    ComparisonOperator: v.picklist(
      COMPARISONS,
      'a static threshold comparison (anomaly detection is not evaluated locally)',
    ),
    TreatMissingData: v.optional(v.picklist(MISSING_DATA), 'missing'),
    Unit: v.optional(v.string()),
  }),
  v.check(
    (a) => (a.DatapointsToAlarm ?? a.EvaluationPeriods) <= a.EvaluationPeriods,
    'DatapointsToAlarm must not exceed EvaluationPeriods',
  ),
);
export type MetricAlarm = v.InferOutput<typeof MetricAlarmSchema>;

/** `AlarmsIngestOrdersErrorsEBDEFE6D` → `IngestOrdersErrors`: the id CDK's construct was given. */
export const alarmId = (logicalId: string) =>
  logicalId.replace(/^Alarms/, '').replace(/[0-9A-F]{8}$/, '');

/** The metric an alarm watches. */
export const metricOf = (a: MetricAlarm): MetricId => ({
  namespace: a.Namespace,
  name: a.MetricName,
  dimensions: Object.fromEntries(a.Dimensions.map((d) => [d.Name, d.Value])),
});

export interface TemplateAlarms {
  readonly alarms: { readonly logicalId: string; readonly alarm: MetricAlarm }[];
  /** Alarms the edge does not evaluate, each with the reason. */
  readonly notRun: string[];
}

/**
 * The template's metric alarms, resolved: named `<stack>-<logicalId>` unless the template names
 * them. An action on a topic not provisioned (provisioning without an SNS client) keeps the ARN
 * the topic would have locally, `arn:aws:sns:<region>:<account>:<stack>-<logicalId>`.
 */
export const templateAlarms = (
  resources: ResourceEntries,
  options: {
    readonly stackName: string;
    readonly region: string;
    readonly account: string;
    readonly resolveValue: (value: unknown) => unknown;
  },
): TemplateAlarms => {
  const alarms: TemplateAlarms['alarms'][number][] = [];
  const notRun: string[] = [];
  const resolveAction = (action: unknown) => {
    try {
      return options.resolveValue(action);
    } catch (error) {
      if (!(error instanceof UnresolvableError)) throw error;
      const ref = asRecord(action).Ref;
      if (typeof ref !== 'string') throw error;
      return `arn:aws:sns:${options.region}:${options.account}:${physicalName(options.stackName, ref, 256)}`;
    }
  };
  for (const [id, resource] of resources.filter(([, r]) => r.Type === 'AWS::CloudWatch::Alarm')) {
    const p = asRecord(resource.Properties);
    if (p.Metrics !== undefined) {
      notRun.push(`${id}: an alarm on metric math (only single metrics are evaluated locally)`);
      continue;
    }
    try {
      const resolved = asRecord(
        options.resolveValue(
          Object.fromEntries(
            Object.entries(p).filter(([k]) => !k.endsWith('Actions') || k === 'ActionsEnabled'),
          ),
        ),
      );
      const withActions = Object.fromEntries(
        ['OKActions', 'AlarmActions', 'InsufficientDataActions'].flatMap((k) =>
          Array.isArray(p[k]) ? [[k, p[k].map(resolveAction)]] : [],
        ),
      );
      const parsed = v.safeParse(MetricAlarmSchema, {
        AlarmName: physicalName(options.stackName, id, 255),
        ...resolved,
        ...withActions,
      });
      if (parsed.success) alarms.push({ logicalId: id, alarm: parsed.output });
      else notRun.push(`${id}: ${parsed.issues.map((i) => i.message).join('; ')}`);
    } catch (error) {
      if (!(error instanceof UnresolvableError)) throw error;
      notRun.push(`${id}: ${error.message}`);
    }
  }
  return { alarms, notRun };
};

const statisticOf = (set: StatisticSet, statistic: MetricAlarm['Statistic']): number =>
  ({
    SampleCount: set.sampleCount,
    Average: set.sum / set.sampleCount,
    Sum: set.sum,
    Minimum: set.minimum,
    Maximum: set.maximum,
  })[statistic];

const crosses = (value: number, a: MetricAlarm): boolean =>
  ({
    GreaterThanOrEqualToThreshold: value >= a.Threshold,
    GreaterThanThreshold: value > a.Threshold,
    LessThanThreshold: value < a.Threshold,
    LessThanOrEqualToThreshold: value <= a.Threshold,
  })[a.ComparisonOperator];

const WORDING: Record<MetricAlarm['ComparisonOperator'], string> = {
  GreaterThanOrEqualToThreshold: 'greater than or equal to',
  GreaterThanThreshold: 'greater than',
  LessThanThreshold: 'less than',
  LessThanOrEqualToThreshold: 'less than or equal to',
};

export interface Evaluation {
  /** The state the alarm is in now; undefined: unchanged (`TreatMissingData: ignore`, no data). */
  readonly state: AlarmState | undefined;
  readonly reason: string;
  /** CloudWatch's `StateReasonData`: the datapoints evaluated, newest first. */
  readonly reasonData: string;
}

/**
 * The alarm's state now: its evaluation periods end at `nowMs`, newest first, each read through
 * `windowOf` (undefined: no data in it). ALARM when at least `DatapointsToAlarm` of them breach;
 * a period without data breaches, does not, or is left out, as `TreatMissingData` says. The
 * reason and its data are CloudWatch's words and shape (`alarm-reasons.ts`).
 */
export const evaluateAlarm = (
  a: MetricAlarm,
  windowOf: (fromMs: number, toMs: number) => StatisticSet | undefined,
  nowMs: number,
): Evaluation => {
  const periodMs = a.Period * 1000;
  const points = Array.from({ length: a.EvaluationPeriods }, (_, k) => {
    const toMs = nowMs - k * periodMs;
    return { atMs: toMs - periodMs, set: windowOf(toMs - periodMs, toMs) };
  });
  const present = points.flatMap(({ atMs, set }) =>
    set ? [{ atMs, value: statisticOf(set, a.Statistic), sampleCount: set.sampleCount }] : [],
  );
  const needed = a.DatapointsToAlarm ?? a.EvaluationPeriods;
  const oldest = present.at(-1);
  const reasonData = JSON.stringify({
    version: '1.0',
    queryDate: cloudWatchTime(nowMs),
    ...(oldest ? { startDate: cloudWatchTime(oldest.atMs) } : {}),
    statistic: a.Statistic,
    period: a.Period,
    recentDatapoints: present.map((p) => p.value),
    threshold: a.Threshold,
    evaluatedDatapoints: present.map((p) => ({
      timestamp: cloudWatchTime(p.atMs),
      sampleCount: p.sampleCount,
      value: p.value,
    })),
  });
  if (present.length === 0) {
    const state = (
      {
        notBreaching: 'OK',
        breaching: 'ALARM',
        missing: 'INSUFFICIENT_DATA',
        ignore: undefined,
      } as const
    )[a.TreatMissingData];
    return { state, reason: noDataReason(a.EvaluationPeriods, a.TreatMissingData), reasonData };
  }
  const missing = points.length - present.length;
  const breachingPoints = present.filter((p) => crosses(p.value, a));
  const breaching = breachingPoints.length + (a.TreatMissingData === 'breaching' ? missing : 0);
  const state: AlarmState = breaching >= needed ? 'ALARM' : 'OK';
  const reason = thresholdReason({
    state,
    deciding: state === 'ALARM' ? breaching : a.EvaluationPeriods - breaching,
    periods: a.EvaluationPeriods,
    points: state === 'ALARM' ? breachingPoints : present.filter((p) => !crosses(p.value, a)),
    comparison: WORDING[a.ComparisonOperator],
    threshold: a.Threshold,
    datapointsToAlarm: a.DatapointsToAlarm,
  });
  return { state, reason, reasonData };
};
