/**
 * The local edge's metrics and alarm evaluation: embedded metric lines read as CloudWatch Logs
 * reads them, statistics that add up whatever the periods, and alarms that fire exactly when
 * enough of their periods breach.
 */
import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { AlarmBook } from '../../local/alarm-book.ts';
import { javaNumber } from '../../local/alarm-reasons.ts';
import {
  COMPARISONS,
  evaluateAlarm,
  type MetricAlarm,
  MetricAlarmSchema,
  MISSING_DATA,
  metricOf,
  STATISTICS,
} from '../../local/alarms.ts';
import { emfDatapoints, MetricStore } from '../../local/metrics.ts';

const alarmOf = (fields: Partial<Record<keyof MetricAlarm, unknown>>): MetricAlarm =>
  v.parse(MetricAlarmSchema, {
    AlarmName: 'a',
    MetricName: 'RejectedMessages',
    Namespace: 'onceflow',
    Statistic: 'Sum',
    Dimensions: [{ Name: 'service', Value: 'onceflow' }],
    Period: 300,
    EvaluationPeriods: 1,
    Threshold: 1,
    ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    TreatMissingData: 'notBreaching',
    ...fields,
  });

describe('embedded metric lines', () => {
  it('reads each metric value under each dimension set, and nothing from other lines', () => {
    const line = JSON.stringify({
      _aws: {
        Timestamp: 1_700_000_000_000,
        CloudWatchMetrics: [
          {
            Namespace: 'onceflow',
            Dimensions: [['service'], ['service', 'missing']],
            Metrics: [{ Name: 'DuplicateBatches', Unit: 'Count' }, { Name: 'EventsApplied' }],
          },
        ],
      },
      service: 'onceflow',
      DuplicateBatches: 1,
      EventsApplied: [3, 4],
    });
    // The set naming a dimension the line lacks is dropped, as CloudWatch Logs drops it.
    expect(emfDatapoints(line)).toEqual([
      {
        namespace: 'onceflow',
        name: 'DuplicateBatches',
        dimensions: { service: 'onceflow' },
        timestampMs: 1_700_000_000_000,
        value: 1,
        unit: 'Count',
      },
      expect.objectContaining({ name: 'EventsApplied', value: 3, unit: undefined }),
      expect.objectContaining({ name: 'EventsApplied', value: 4 }),
    ]);
    expect(emfDatapoints('{"level":"INFO","message":"batch applied"}')).toEqual([]);
    expect(emfDatapoints('{"CloudWatchMetrics": not json')).toEqual([]);
    expect(emfDatapoints('{"_aws":{"CloudWatchMetrics":"no"},"x":"CloudWatchMetrics"}')).toEqual(
      [],
    );
  });
});

describe('the metric store', () => {
  it('gives the same totals whatever the period the statistics are asked in', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            atMs: fc.integer({ min: 0, max: 6 * 3_600_000 - 1 }),
            value: fc.integer({ min: -1000, max: 1000 }),
          }),
          { minLength: 1, maxLength: 60 },
        ),
        fc.constantFrom(60, 300, 3600, 86_400),
        (data, period) => {
          const store = new MetricStore();
          const id = { namespace: 'n', name: 'm', dimensions: { d: 'x' } };
          for (const d of data) store.put({ ...id, timestampMs: d.atMs, value: d.value });
          const points = store.statistics(id, 0, 6 * 3_600_000, period);
          const values = data.map((d) => d.value);
          expect(points.reduce((s, p) => s + p.set.sum, 0)).toBe(values.reduce((s, x) => s + x, 0));
          expect(points.reduce((s, p) => s + p.set.sampleCount, 0)).toBe(data.length);
          expect(Math.max(...points.map((p) => p.set.maximum))).toBe(Math.max(...values));
          expect(Math.min(...points.map((p) => p.set.minimum))).toBe(Math.min(...values));
          // Another dimension set is another series.
          expect(store.statistics({ ...id, dimensions: {} }, 0, 6 * 3_600_000, period)).toEqual([]);
        },
      ),
    );
  });
});

describe('alarm evaluation', () => {
  /** Up to three data in the middle of each evaluation period (none: no data), newest first. */
  const arbitraryCase = fc
    .record({
      periods: fc.integer({ min: 1, max: 5 }),
      period: fc.constantFrom(300, 600, 3600),
      statistic: fc.constantFrom(...STATISTICS),
      comparison: fc.constantFrom(...COMPARISONS),
      missing: fc.constantFrom(...MISSING_DATA),
      threshold: fc.integer({ min: -3, max: 3 }),
    })
    .chain((c) =>
      fc.record({
        c: fc.constant(c),
        // Unset half the time: N out of N, which CloudWatch words another way.
        needed: fc.option(fc.integer({ min: 1, max: c.periods }), { nil: undefined }),
        values: fc.array(fc.array(fc.integer({ min: -5, max: 5 }), { maxLength: 3 }), {
          minLength: c.periods,
          maxLength: c.periods,
        }),
      }),
    );

  type Case = typeof arbitraryCase extends fc.Arbitrary<infer T> ? T : never;

  const run = ({ c, needed, values }: Case, nowMs = 1_800_000_000_000) => {
    const alarm = alarmOf({
      Period: c.period,
      Statistic: c.statistic,
      EvaluationPeriods: c.periods,
      DatapointsToAlarm: needed,
      ComparisonOperator: c.comparison,
      TreatMissingData: c.missing,
      Threshold: c.threshold,
    });
    const store = new MetricStore();
    values.forEach((data, k) => {
      for (const value of data)
        store.put({
          ...metricOf(alarm),
          timestampMs: nowMs - k * c.period * 1000 - (c.period * 1000) / 2,
          value,
        });
    });
    return evaluateAlarm(alarm, (from, to) => store.window(metricOf(alarm), from, to), nowMs);
  };

  it('is in ALARM exactly when enough periods’ statistics breach, missing ones counted as TreatMissingData says', () => {
    fc.assert(
      fc.property(arbitraryCase, (x) => {
        const { c, needed, values } = x;
        const crosses = (n: number) =>
          ({
            GreaterThanOrEqualToThreshold: n >= c.threshold,
            GreaterThanThreshold: n > c.threshold,
            LessThanThreshold: n < c.threshold,
            LessThanOrEqualToThreshold: n <= c.threshold,
          })[c.comparison];
        const sum = (data: number[]) => data.reduce((a, b) => a + b, 0);
        const statistic = (data: number[]) =>
          ({
            SampleCount: data.length,
            Sum: sum(data),
            Average: sum(data) / data.length,
            Minimum: Math.min(...data),
            Maximum: Math.max(...data),
          })[c.statistic];
        const present = values.filter((data) => data.length > 0).map(statistic);
        const breaching =
          present.filter(crosses).length +
          (c.missing === 'breaching' ? values.length - present.length : 0);
        const expected =
          present.length === 0
            ? {
                notBreaching: 'OK',
                breaching: 'ALARM',
                missing: 'INSUFFICIENT_DATA',
                ignore: undefined,
              }[c.missing]
            : breaching >= (needed ?? c.periods)
              ? 'ALARM'
              : 'OK';
        const result = run(x);
        expect(result.state).toBe(expected);
        // The reason counts what decided the state, in CloudWatch's words.
        if (present.length > 0) {
          const deciding = expected === 'ALARM' ? breaching : c.periods - breaching;
          const shown = present.filter((p) => crosses(p) === (expected === 'ALARM')).length;
          const points = Array(shown)
            .fill('-?[\\d.]+ \\(\\d\\d/\\d\\d/\\d\\d \\d\\d:\\d\\d:\\d\\d\\)')
            .join(', ');
          const counted =
            needed === undefined
              ? `${shown} datapoints?`
              : `${deciding} out of the last ${c.periods} datapoints`;
          expect(result.reason).toMatch(
            new RegExp(
              `^Threshold Crossed: ${counted} \\[${points}\\] (was|were) ${expected === 'OK' ? 'not ' : ''}`,
            ),
          );
        }
        expect(JSON.parse(result.reasonData).recentDatapoints).toHaveLength(present.length);
      }),
    );
  });

  it('words its reasons and reason data as CloudWatch does, whatever the outcome', () => {
    const nowMs = Date.parse('2026-12-07T19:21:56.308Z');
    const twoOfThree = {
      c: {
        periods: 3,
        period: 300 as const,
        statistic: 'Sum' as const,
        comparison: 'GreaterThanThreshold' as const,
        missing: 'missing' as const,
        threshold: 1,
      },
      needed: 2,
    };
    const fired = run({ ...twoOfThree, values: [[2], [0.5, 0.25], [1e7]] }, nowMs);
    expect(fired.state).toBe('ALARM');
    expect(fired.reason).toBe(
      'Threshold Crossed: 2 out of the last 3 datapoints [2.0 (07/12/26 19:16:56), 1.0E7 (07/12/26 19:06:56)] were greater than the threshold (1.0) (minimum 2 datapoints for OK -> ALARM transition).',
    );
    expect(JSON.parse(fired.reasonData)).toEqual({
      version: '1.0',
      queryDate: '2026-12-07T19:21:56.308+0000',
      startDate: '2026-12-07T19:06:56.308+0000',
      statistic: 'Sum',
      period: 300,
      recentDatapoints: [2, 0.75, 1e7],
      threshold: 1,
      evaluatedDatapoints: [
        { timestamp: '2026-12-07T19:16:56.308+0000', sampleCount: 1, value: 2 },
        { timestamp: '2026-12-07T19:11:56.308+0000', sampleCount: 2, value: 0.75 },
        { timestamp: '2026-12-07T19:06:56.308+0000', sampleCount: 1, value: 1e7 },
      ],
    });
    // Three of three to fire: one period not breaching is enough to leave ALARM.
    const ok = run({ ...twoOfThree, needed: 3, values: [[0.5], [], [3]] }, nowMs);
    expect(ok.state).toBe('OK');
    expect(ok.reason).toBe(
      'Threshold Crossed: 2 out of the last 3 datapoints [0.5 (07/12/26 19:16:56)] were not greater than the threshold (1.0) (minimum 1 datapoint for ALARM -> OK transition).',
    );
    // Without DatapointsToAlarm (N out of N), the datapoints that decided it, listed.
    const allOfTwo = { c: { ...twoOfThree.c, periods: 2 }, needed: undefined };
    expect(run({ ...allOfTwo, values: [[2], [3]] }, nowMs).reason).toBe(
      'Threshold Crossed: 2 datapoints [2.0 (07/12/26 19:16:56), 3.0 (07/12/26 19:11:56)] were greater than the threshold (1.0).',
    );
    expect(run({ ...allOfTwo, values: [[0], [3]] }, nowMs)).toMatchObject({
      state: 'OK',
      reason:
        'Threshold Crossed: 1 datapoint [0.0 (07/12/26 19:16:56)] was not greater than the threshold (1.0).',
    });
    const none = (missing: (typeof MISSING_DATA)[number], periods = 1) =>
      run({ c: { ...twoOfThree.c, missing, periods }, needed: 1, values: Array(periods).fill([]) });
    expect(none('notBreaching').reason).toBe(
      'Threshold Crossed: no datapoints were received for 1 period and 1 missing datapoint was treated as [NonBreaching].',
    );
    expect(none('breaching', 2).reason).toBe(
      'Threshold Crossed: no datapoints were received for 2 periods and 2 missing datapoints were treated as [Breaching].',
    );
    expect(none('missing').reason).toBe('Insufficient Data: 1 datapoint was unknown.');
    expect(none('missing', 3).reason).toBe('Insufficient Data: 3 datapoints were unknown.');
    expect(none('ignore', 2)).toMatchObject({
      state: undefined,
      reason: 'Threshold Crossed: no datapoints were received for 2 periods.',
    });
  });

  it('writes numbers as CloudWatch’s service does', () => {
    expect([0, 1, -2, 0.25, 1234567.5, 1e7, 2.5e-5, -1e21].map(javaNumber)).toEqual([
      '0.0',
      '1.0',
      '-2.0',
      '0.25',
      '1234567.5',
      '1.0E7',
      '2.5E-5',
      '-1.0E21',
    ]);
  });

  it('keeps a state set by hand until the next evaluation, a minute later', () => {
    const book = new AlarmBook({ region: 'us-east-1', account: '000000000000' });
    book.adopt([{ logicalId: 'A', alarm: alarmOf({}) }], 0);
    const none = () => undefined;
    book.evaluate(none, 1_000);
    expect(book.get('a')?.state).toBe('OK');
    book.setState('a', 'ALARM', 'drill', undefined, 2_000);
    book.evaluate(none, 61_999);
    expect(book.get('a')).toMatchObject({ state: 'ALARM', reason: 'drill' });
    book.evaluate(none, 62_000);
    expect(book.get('a')?.state).toBe('OK');
    expect(book.history().map((h) => h.summary)).toEqual([
      'Alarm updated from ALARM to OK',
      'Alarm updated from OK to ALARM',
      'Alarm updated from INSUFFICIENT_DATA to OK',
      'Alarm "a" created',
    ]);
  });

  it('refuses what it cannot evaluate, naming it', () => {
    const refused = (fields: Record<string, unknown>) => {
      const parsed = v.safeParse(MetricAlarmSchema, { ...alarmOf({}), ...fields });
      return parsed.success ? 'accepted' : parsed.issues.map((i) => i.message).join('; ');
    };
    expect(refused({ Statistic: 'p99' })).toContain('percentiles are not evaluated locally');
    expect(refused({ ComparisonOperator: 'LessThanLowerOrGreaterThanUpperThreshold' })).toContain(
      'anomaly detection',
    );
    expect(refused({ Period: 90 })).toBe('Period must be 10, 20, 30 or a multiple of 60');
    expect(refused({ EvaluationPeriods: 2, DatapointsToAlarm: 3 })).toBe(
      'DatapointsToAlarm must not exceed EvaluationPeriods',
    );
  });
});
