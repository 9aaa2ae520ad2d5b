import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  InvalidScheduleExpressionError,
  nextRun,
  parseScheduleExpression,
  runsAt,
} from '../../local/schedule-expression.ts';

const at = (iso: string) => Date.parse(iso);
const MINUTE = 60_000;
/** The next run of `expression` after `iso`, as an ISO time (or undefined). */
const next = (expression: string, iso: string) => {
  const ms = nextRun(parseScheduleExpression(expression), at(iso), at(iso));
  return ms === undefined ? undefined : new Date(ms).toISOString().replace('.000Z', 'Z');
};
/** The first `n` runs after `iso`. */
const runs = (expression: string, iso: string, n: number) => {
  const found: (string | undefined)[] = [];
  let after = iso;
  for (let i = 0; i < n; i++) {
    const run = next(expression, after);
    found.push(run);
    if (run === undefined) break;
    after = run;
  }
  return found;
};

describe('EventBridge rate expressions', () => {
  it('runs every period from when the rule was created, the first one period after it', () => {
    const created = at('2026-12-05T15:42:10Z');
    const rate = parseScheduleExpression('rate(5 minutes)');
    expect(nextRun(rate, created, created)).toBe(created + 5 * MINUTE);
    expect(nextRun(rate, created + 5 * MINUTE, created)).toBe(created + 10 * MINUTE);
    expect(nextRun(rate, created + 7 * MINUTE, created)).toBe(created + 10 * MINUTE);
    expect(parseScheduleExpression('rate(1 minute)')).toMatchObject({ everySeconds: 60 });
    expect(parseScheduleExpression('rate(1 hour)')).toMatchObject({ everySeconds: 3600 });
    expect(parseScheduleExpression('rate(2 days)')).toMatchObject({ everySeconds: 172_800 });
  });

  it('refuses a unit that is not singular for 1 and plural above, as PutRule does', () => {
    for (const expression of [
      'rate(1 minutes)',
      'rate(5 minute)',
      'rate(0 minutes)',
      'rate(5 seconds)',
      'rate(5minutes)',
      'every 5 minutes',
    ])
      expect(() => parseScheduleExpression(expression), expression).toThrow(
        InvalidScheduleExpressionError,
      );
    expect(() => parseScheduleExpression('rate(1 minutes)')).toThrow(
      'Parameter ScheduleExpression is not valid: rate(1 minutes) (the unit is singular for 1 and plural above)',
    );
  });
});

describe('EventBridge cron expressions, in UTC', () => {
  // Saturday 5 December 2026, 15:42:03 UTC.
  const now = '2026-12-05T15:42:03Z';

  it('runs the examples of EventBridge’s documentation when it says they run', () => {
    expect(runs('cron(0 10 * * ? *)', now, 2)).toEqual([
      '2026-12-06T10:00:00Z',
      '2026-12-07T10:00:00Z',
    ]);
    expect(next('cron(15 12 * * ? *)', now)).toBe('2026-12-06T12:15:00Z');
    // Monday to Friday at 18:00: from a Saturday, Monday.
    expect(next('cron(0 18 ? * MON-FRI *)', now)).toBe('2026-12-07T18:00:00Z');
    expect(next('cron(0 8 1 * ? *)', now)).toBe('2027-01-01T08:00:00Z');
    expect(runs('cron(0/15 * * * ? *)', now, 3)).toEqual([
      '2026-12-05T15:45:00Z',
      '2026-12-05T16:00:00Z',
      '2026-12-05T16:15:00Z',
    ]);
    expect(next('cron(0/10 * ? * MON-FRI *)', now)).toBe('2026-12-07T00:00:00Z');
    expect(runs('cron(0/5 8-17 ? * MON-FRI *)', '2026-12-04T17:52:00Z', 2)).toEqual([
      '2026-12-04T17:55:00Z',
      '2026-12-07T08:00:00Z',
    ]);
  });

  it('runs only on the minute boundary strictly after the given time', () => {
    expect(next('cron(* * * * ? *)', '2026-12-05T15:42:00Z')).toBe('2026-12-05T15:43:00Z');
    expect(next('cron(* * * * ? *)', '2026-12-05T15:42:59.999Z')).toBe('2026-12-05T15:43:00Z');
    expect(next('cron(1/20 * * * ? *)', now)).toBe('2026-12-05T16:01:00Z');
  });

  it('reads L, W and # as EventBridge does: last days, nearest weekdays, nth weekdays', () => {
    // The last day of each month, leap years included.
    expect(runs('cron(0 0 L * ? *)', '2028-01-15T00:00:00Z', 3)).toEqual([
      '2028-01-31T00:00:00Z',
      '2028-02-29T00:00:00Z',
      '2028-03-31T00:00:00Z',
    ]);
    // The weekday nearest the 1st, never in another month: 1 August 2026 is a Saturday.
    expect(next('cron(0 9 1W * ? *)', '2026-07-15T00:00:00Z')).toBe('2026-08-03T09:00:00Z');
    // 15 November 2026 is a Sunday: Monday the 16th.
    expect(next('cron(0 9 15W * ? *)', '2026-11-01T00:00:00Z')).toBe('2026-11-16T09:00:00Z');
    // The last weekday: 31 January 2027 is a Sunday.
    expect(next('cron(0 9 LW * ? *)', '2027-01-15T00:00:00Z')).toBe('2027-01-29T09:00:00Z');
    // The last Friday (6) of the month, and the first Monday (2#1).
    expect(next('cron(0 9 ? * 6L *)', now)).toBe('2026-12-25T09:00:00Z');
    // The last Thursday (5) of December 2026 is its last day: the 24th is a week before it.
    expect(next('cron(0 9 ? * 5L *)', now)).toBe('2026-12-31T09:00:00Z');
    expect(runs('cron(0 9 ? * 2#1 *)', now, 2)).toEqual([
      '2026-12-07T09:00:00Z',
      '2027-01-04T09:00:00Z',
    ]);
    expect(next('cron(0 9 ? * MON#1 *)', '2026-12-07T09:00:00Z')).toBe('2027-01-04T09:00:00Z');
    // L alone in the day-of-week field: Saturday, its last day.
    expect(next('cron(0 20 ? * L *)', now)).toBe('2026-12-05T20:00:00Z');
  });

  it('reads names, lists, ranges that wrap past the week’s end, increments and years', () => {
    expect(runs('cron(30 6 ? * FRI-MON *)', '2026-12-03T00:00:00Z', 5)).toEqual([
      '2026-12-04T06:30:00Z',
      '2026-12-05T06:30:00Z',
      '2026-12-06T06:30:00Z',
      '2026-12-07T06:30:00Z',
      '2026-12-11T06:30:00Z',
    ]);
    expect(runs('cron(0 0 1 JAN,jul ? *)', now, 2)).toEqual([
      '2027-01-01T00:00:00Z',
      '2027-07-01T00:00:00Z',
    ]);
    expect(runs('cron(0 12 29 2 ? 2027-2030)', now, 2)).toEqual([
      '2028-02-29T12:00:00Z',
      undefined,
    ]);
    expect(next('cron(0 0 1 1 ? 2030)', '2030-01-01T00:00:00Z')).toBeUndefined();
  });

  it('refuses what PutRule refuses, naming the field', () => {
    const refusals: [string, RegExp][] = [
      ['cron(0 10 * * *)', /takes 6 fields/],
      ['cron(0 10 * * * *)', /one of day-of-month and day-of-week must be \?/],
      ['cron(0 10 ? * ? *)', /one of day-of-month and day-of-week must be \?/],
      ['cron(60 10 * * ? *)', /minutes takes 0–59, not 60/],
      ['cron(0 24 * * ? *)', /hours takes 0–23, not 24/],
      ['cron(0 10 * 13 ? *)', /month takes 1–12 or a name, not 13/],
      ['cron(0 10 ? * 0 *)', /day-of-week takes 1–7 or a name, not 0/],
      ['cron(0 10 ? * */2 *)', /day-of-week takes no increment/],
      ['cron(0 10 ? * 3#1,6#3 *)', /with # takes one expression only/],
      ['cron(0 10 ? * 3#6 *)', /names week 6/],
      ['cron(0 10 * * ? 1969)', /year takes 1970–2199/],
      ['cron(0/0 10 * * ? *)', /increment of 0\/0 is not a positive whole number/],
    ];
    for (const [expression, why] of refusals)
      expect(() => parseScheduleExpression(expression), expression).toThrow(why);
  });

  it('runs a month’s last and nth weekday on the day they name, for any month', () => {
    const DAY = 86_400_000;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 7 }),
        fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
        fc.integer({ min: at('2026-01-01T00:00:00Z'), max: at('2032-12-31T00:00:00Z') }),
        (weekday, week, t) => {
          const dow = week === undefined ? `${weekday}L` : `${weekday}#${week}`;
          const found = nextRun(parseScheduleExpression(`cron(0 9 ? * ${dow} *)`), t, t);
          if (found === undefined) throw new Error(`${dow} never runs after ${t}`);
          const day = new Date(found);
          expect(day.getUTCDay() + 1).toBe(weekday);
          const sameWeekday = (offsetDays: number) =>
            new Date(found + offsetDays * DAY).getUTCMonth() === day.getUTCMonth();
          if (week === undefined) expect(sameWeekday(7)).toBe(false);
          else {
            // Exactly week − 1 of the same weekday earlier in the month.
            const earlier = [1, 2, 3, 4].filter((w) => sameWeekday(-7 * w)).length;
            expect(earlier).toBe(week - 1);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('finds the first minute that the expression names, after any time, for any expression', () => {
    const few = (max: number, min = 0) => fc.integer({ min, max });
    const field = (max: number, min = 0) =>
      fc.oneof(
        fc.constant('*'),
        few(max, min).map(String),
        fc.tuple(few(max, min), few(max, min)).map(([a, b]) => `${a}-${b}`),
        fc.tuple(few(max, min), few(9, 1)).map(([a, s]) => `${a}/${s}`),
        fc.tuple(few(max, min), few(max, min)).map(([a, b]) => `${a},${b}`),
      );
    // Days of month up to 28 and weeks up to 4, so that every month has a run and the minute
    // scan that checks the answer stays within weeks.
    const day = fc.oneof(
      fc.tuple(field(28, 1), fc.constant('?')),
      fc.tuple(fc.constantFrom('L', 'LW', '1W', '15W', '28W'), fc.constant('?')),
      fc.tuple(
        fc.constant('?'),
        fc.oneof(
          fc.constantFrom('*', 'L', 'MON-FRI', 'FRI-MON', 'SUN,SAT'),
          few(7, 1).map(String),
          fc.tuple(few(7, 1), few(4, 1)).map(([d, k]) => `${d}#${k}`),
          few(7, 1).map((d) => `${d}L`),
        ),
      ),
    );
    fc.assert(
      fc.property(
        field(59),
        field(23),
        day,
        fc.integer({ min: at('2026-01-01T00:00:00Z'), max: at('2032-12-31T00:00:00Z') }),
        (minutes, hours, [dom, dow], t) => {
          const expression = parseScheduleExpression(`cron(${minutes} ${hours} ${dom} * ${dow} *)`);
          const found = nextRun(expression, t, t);
          if (found === undefined) throw new Error(`${expression.text} never runs after ${t}`);
          expect(found).toBeGreaterThan(t);
          expect(found % MINUTE).toBe(0);
          expect(runsAt(expression, found)).toBe(true);
          for (let m = (Math.floor(t / MINUTE) + 1) * MINUTE; m < found; m += MINUTE)
            if (runsAt(expression, m))
              throw new Error(
                `${expression.text} runs at ${new Date(m).toISOString()}, before ${new Date(found).toISOString()}`,
              );
        },
      ),
      { numRuns: 150 },
    );
  });
});
