/**
 * EventBridge Scheduler's schedules as the local runtime reads and times them: `at`, `rate` and
 * `cron` expressions, a schedule's time zone across daylight saving time (a skipped wall time is
 * not run that day, a repeated one runs once), its start and end dates, and the context
 * attributes filled into its input. Pure: no timers.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidScheduleExpressionError, runsAt } from '../../local/schedule-expression.ts';
import {
  type LocalSchedulerSchedule,
  nextSchedulerRun,
  parseSchedulerExpression,
  schedulerInput,
  schedulerSchedules,
} from '../../local/scheduler.ts';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) =>
  ms === undefined ? undefined : new Date(ms).toISOString().replace('.000Z', 'Z');

const schedule = (
  expression: string,
  o: Partial<Omit<LocalSchedulerSchedule, 'expression'>> = {},
): LocalSchedulerSchedule => ({
  logicalId: 'Nightly',
  name: 'app-Nightly',
  groupName: 'default',
  arn: 'arn:aws:scheduler:us-east-1:000000000000:schedule/default/app-Nightly',
  functionLogicalId: 'Fn',
  timeZone: 'UTC',
  enabled: true,
  ...o,
  expression: parseSchedulerExpression(expression),
});

/** The first `n` runs after `fromIso`, the runtime having created the schedule then. */
const runs = (s: LocalSchedulerSchedule, fromIso: string, n: number) => {
  const created = at(fromIso);
  const found: (string | undefined)[] = [];
  let after = created - 1;
  for (let i = 0; i < n; i++) {
    const next = nextSchedulerRun(s, after, created);
    found.push(iso(next));
    if (next === undefined) break;
    after = next;
  }
  return found;
};

describe('Scheduler’s expressions', () => {
  it('runs a rate schedule at once, then every period, or from its start date on the same grid', () => {
    expect(runs(schedule('rate(10 minutes)'), '2026-12-05T10:03:00Z', 3)).toEqual([
      '2026-12-05T10:03:00Z',
      '2026-12-05T10:13:00Z',
      '2026-12-05T10:23:00Z',
    ]);
    const started = schedule('rate(1 hours)', { startMs: at('2026-12-01T00:30:00Z') });
    expect(runs(started, '2026-12-05T10:03:00Z', 2)).toEqual([
      '2026-12-05T10:30:00Z',
      '2026-12-05T11:30:00Z',
    ]);
  });

  it('runs a day’s rate every 24 hours, whatever the zone’s clocks do', () => {
    const daily = schedule('rate(1 day)', {
      timeZone: 'America/New_York',
      startMs: at('2026-03-07T12:00:00Z'),
    });
    expect(runs(daily, '2026-03-07T00:00:00Z', 3)).toEqual([
      '2026-03-07T12:00:00Z',
      '2026-03-08T12:00:00Z',
      '2026-03-09T12:00:00Z',
    ]);
  });

  it('runs a one-time schedule once, at its wall time in its zone, and never when that is past', () => {
    const once = schedule('at(2026-12-24T18:00:30)', { timeZone: 'Europe/Paris' });
    expect(runs(once, '2026-12-05T00:00:00Z', 2)).toEqual(['2026-12-24T17:00:30Z', undefined]);
    expect(runs(once, '2026-12-25T00:00:00Z', 1)).toEqual([undefined]);
    // 02:30 does not exist in New York on 2026-03-08: taken at the offset before the change.
    const skipped = schedule('at(2026-03-08T02:30:00)', { timeZone: 'America/New_York' });
    expect(runs(skipped, '2026-03-01T00:00:00Z', 1)).toEqual(['2026-03-08T07:30:00Z']);
  });

  it('skips a cron run on the day clocks spring past it, and runs a repeated one once', () => {
    const ny = { timeZone: 'America/New_York' };
    expect(runs(schedule('cron(30 2 * * ? *)', ny), '2026-03-06T12:00:00Z', 3)).toEqual([
      '2026-03-07T07:30:00Z',
      // 2026-03-08: 02:30 never comes.
      '2026-03-09T06:30:00Z',
      '2026-03-10T06:30:00Z',
    ]);
    expect(runs(schedule('cron(30 1 * * ? *)', ny), '2026-10-31T00:00:00Z', 3)).toEqual([
      '2026-10-31T05:30:00Z',
      // 2026-11-01: 01:30 comes twice, at 05:30Z and 06:30Z; it runs the first time only.
      '2026-11-01T05:30:00Z',
      '2026-11-02T06:30:00Z',
    ]);
  });

  it('runs only between the start and end dates', () => {
    const bounded = schedule('cron(0 12 * * ? *)', {
      startMs: at('2026-12-06T00:00:00Z'),
      endMs: at('2026-12-07T12:00:00Z'),
    });
    expect(runs(bounded, '2026-12-05T00:00:00Z', 3)).toEqual([
      '2026-12-06T12:00:00Z',
      '2026-12-07T12:00:00Z',
      undefined,
    ]);
  });

  it('takes a rate’s unit in the singular or the plural, and refuses a time that does not exist', () => {
    expect(parseSchedulerExpression('rate(1 minutes)')).toMatchObject({ everySeconds: 60 });
    expect(parseSchedulerExpression('rate(5 minute)')).toMatchObject({ everySeconds: 300 });
    for (const text of ['at(2026-02-30T10:00:00)', 'at(2026-12-05T24:00:00)', 'at(tomorrow)'])
      expect(() => parseSchedulerExpression(text), text).toThrow(InvalidScheduleExpressionError);
  });

  it('fills in the context attributes of its input', () => {
    const s = schedule('rate(5 minutes)', {
      input:
        '{"arn":"<aws.scheduler.schedule-arn>","at":"<aws.scheduler.scheduled-time>","id":"<aws.scheduler.execution-id>","n":<aws.scheduler.attempt-number>}',
    });
    expect(
      JSON.parse(schedulerInput(s, { scheduledMs: at('2026-12-05T10:00:00Z'), executionId: 'e1' })),
    ).toEqual({ arn: s.arn, at: '2026-12-05T10:00:00Z', id: 'e1', n: 1 });
    expect(schedulerInput(schedule('rate(5 minutes)'), { scheduledMs: 0, executionId: 'e' })).toBe(
      '{}',
    );
  });
});

describe('a template’s Scheduler schedules', () => {
  const read = (properties: Record<string, unknown>) =>
    schedulerSchedules(
      [
        ['Fn', { Type: 'AWS::Lambda::Function', Properties: {} }],
        [
          'Nightly',
          {
            Type: 'AWS::Scheduler::Schedule',
            Properties: {
              ScheduleExpression: 'cron(0 3 * * ? *)',
              FlexibleTimeWindow: { Mode: 'OFF' },
              Target: { Arn: { 'Fn::GetAtt': ['Fn', 'Arn'] }, RoleArn: 'role' },
              ...properties,
            },
          },
        ],
      ],
      ['Fn'],
      { stackName: 'app', region: 'eu-west-1', account: '000000000000', resolveValue: (v) => v },
    );

  it('names a schedule as CloudFormation does, in its group, and reads its zone, dates and state', () => {
    const { schedules, notRun } = read({
      GroupName: 'nightly',
      ScheduleExpressionTimezone: 'Europe/Dublin',
      StartDate: '2026-12-01T00:00:00Z',
      State: 'DISABLED',
      Target: { Arn: { 'Fn::GetAtt': ['Fn', 'Arn'] }, RoleArn: 'role', Input: '{"a":1}' },
    });
    expect(notRun).toEqual([]);
    expect(schedules).toEqual([
      expect.objectContaining({
        name: 'app-Nightly',
        arn: 'arn:aws:scheduler:eu-west-1:000000000000:schedule/nightly/app-Nightly',
        functionLogicalId: 'Fn',
        timeZone: 'Europe/Dublin',
        startMs: at('2026-12-01T00:00:00Z'),
        enabled: false,
        input: '{"a":1}',
      }),
    ]);
  });

  it('refuses a time zone Scheduler does not know, and names a target that is not a function', () => {
    expect(() => read({ ScheduleExpressionTimezone: 'Mars/Olympus_Mons' })).toThrow(
      'Invalid ScheduleExpressionTimezone Mars/Olympus_Mons',
    );
    expect(read({ Target: { Arn: 'arn:aws:sqs:eu-west-1:000000000000:q', RoleArn: 'r' } })).toEqual(
      {
        schedules: [],
        notRun: ["Nightly: a Scheduler schedule whose target is not one of the stack's functions"],
      },
    );
  });
});

describe('cron in a time zone, against the zone’s own clock', () => {
  // One formatter per zone: `toLocaleString` builds one at every call, 40 µs against 2, and the
  // oracle below reads the clock minute by minute.
  const formatters = new Map<string, Intl.DateTimeFormat>();
  const formatter = (timeZone: string) => {
    const known = formatters.get(timeZone);
    if (known) return known;
    // What `toLocaleString('sv-SE', { timeZone, hour12: false })` prints: 2026-03-29 02:30:00.
    const made = new Intl.DateTimeFormat('sv-SE', {
      timeZone,
      hour12: false,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, made);
    return made;
  };
  /** The zone's wall clock at an instant, read by Intl independently of the code under test. */
  const wall = (ms: number, timeZone: string) =>
    Date.parse(`${formatter(timeZone).format(ms).replace(' ', 'T')}Z`);
  const ZONES = [
    'America/New_York',
    'Europe/London',
    'Australia/Lord_Howe', // half an hour of daylight saving
    'Pacific/Chatham', // +12:45 / +13:45
    'America/Santiago',
    'Asia/Kolkata', // none
  ];
  /** Each zone's clock changes in 2026–2027, found hour by hour. */
  const changes = ZONES.flatMap((timeZone) => {
    const found: number[] = [];
    for (let t = at('2026-01-01T00:00:00Z'); t < at('2028-01-01T00:00:00Z'); t += 3_600_000)
      if (wall(t + 3_600_000, timeZone) - wall(t, timeZone) !== 3_600_000) found.push(t);
    return found.length > 0
      ? found.map((t) => ({ timeZone, t }))
      : [{ timeZone, t: at('2026-06-01T00:00:00Z') }];
  });

  it('runs at the first minute that the zone’s clock shows the expression for the first time', () => {
    const few = (max: number) => fc.integer({ min: 0, max });
    const field = (max: number) =>
      fc.oneof(
        fc.constant('*'),
        few(max).map(String),
        fc.tuple(few(max), few(max)).map(([a, b]) => `${a}-${b}`),
        fc.tuple(few(max), fc.integer({ min: 1, max: 9 })).map(([a, s]) => `${a}/${s}`),
      );
    fc.assert(
      fc.property(
        field(59),
        field(23),
        fc.constantFrom(...changes),
        fc.integer({ min: -36 * 60, max: 6 * 60 }),
        (minutes, hours, change, shift) => {
          const s = schedule(`cron(${minutes} ${hours} * * ? *)`, { timeZone: change.timeZone });
          const { expression } = s;
          if (expression.kind !== 'cron') throw new Error('not cron');
          const from = change.t + shift * 60_000;
          const found = nextSchedulerRun(s, from, from);
          if (found === undefined) throw new Error(`${s.expression.text} never runs`);
          /** Whether the clock shows `m`'s wall time for the first time at `m`. */
          const firstTime = (m: number) => {
            for (let k = 1; k <= 180; k++)
              if (wall(m - k * 60_000, change.timeZone) === wall(m, change.timeZone)) return false;
            return true;
          };
          const due = (m: number) => runsAt(expression, wall(m, change.timeZone)) && firstTime(m);
          expect(found).toBeGreaterThan(from);
          expect(due(found)).toBe(true);
          for (let m = (Math.floor(from / 60_000) + 1) * 60_000; m < found; m += 60_000)
            if (due(m))
              throw new Error(
                `${s.expression.text} in ${change.timeZone} is due at ${iso(m)}, before ${iso(found)}`,
              );
        },
      ),
      { numRuns: 120 },
    );
  });
});
