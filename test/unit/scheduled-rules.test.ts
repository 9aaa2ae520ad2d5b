/**
 * Scheduled rules as the local runtime reads them from a template and runs them: what each
 * target is sent, when runs happen, and how Lambda retries a failed asynchronous invocation.
 * Timers are faked: a run a day away is reached at once.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type AsyncInvokeConfig,
  asyncInvokeConfigs,
  LAMBDA_ASYNC_DEFAULTS,
} from '../../local/async-config.ts';
import { type AsyncOutcome, asyncInvocations } from '../../local/async-invocations.ts';
import { startRuleRunner } from '../../local/rule-runner.ts';
import { type LocalSchedule, scheduledRules } from '../../local/rules.ts';
import { parseScheduleExpression } from '../../local/schedule-expression.ts';

const FUNCTIONS = ['Fn', 'Other'];
const resolveValue = (value: unknown) => {
  if (typeof value === 'object' && value !== null && 'Fn::Join' in value) {
    const [sep, parts] = (value as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
    return parts.map((p) => (typeof p === 'string' ? p : 'resolved')).join(sep);
  }
  if (typeof value === 'object' && value !== null && 'Ref' in value)
    throw new Error(`no local value for ${String((value as { Ref: unknown }).Ref)}`);
  return value;
};
const read = (resources: Record<string, { Type: string; Properties?: unknown }>) =>
  scheduledRules(Object.entries(resources), FUNCTIONS, { stackName: 'app', resolveValue });
const rule = (properties: Record<string, unknown>) => ({
  Type: 'AWS::Events::Rule',
  Properties: {
    ScheduleExpression: 'rate(5 minutes)',
    Targets: [{ Arn: { 'Fn::GetAtt': ['Fn', 'Arn'] }, Id: 'Target0' }],
    ...properties,
  },
});
const target = (extra: Record<string, unknown>) => ({
  Targets: [{ Arn: { 'Fn::GetAtt': ['Fn', 'Arn'] }, Id: 'Target0', ...extra }],
});

describe('a template’s scheduled rules', () => {
  it('sends each target the scheduled event, a constant Input or the part an InputPath names', () => {
    const { schedules, notRun } = read({
      Plain: rule({}),
      Constant: rule({
        ScheduleExpression: 'cron(0 2 * * ? *)',
        ...target({ Input: { 'Fn::Join': ['', ['{"table":"', { Ref: 'T' }, '"}']] } }),
      }),
      Path: rule(target({ InputPath: '$.resources[0]' })),
      Named: rule({ Name: 'nightly', State: 'DISABLED' }),
    });
    expect(notRun).toEqual([]);
    expect(
      schedules.map((s) => [s.logicalId, s.ruleName, s.expression.text, s.input, s.enabled]),
    ).toEqual([
      ['Plain', 'app-Plain', 'rate(5 minutes)', { kind: 'event' }, true],
      [
        'Constant',
        'app-Constant',
        'cron(0 2 * * ? *)',
        { kind: 'constant', value: { table: 'resolved' } },
        true,
      ],
      ['Path', 'app-Path', 'rate(5 minutes)', { kind: 'path', path: ['resources', 0] }, true],
      ['Named', 'nightly', 'rate(5 minutes)', { kind: 'event' }, false],
    ]);
  });

  it('reads Lambda’s async retries from a function’s $LATEST event invoke config, whose defaults are Lambda’s', () => {
    const configs = asyncInvokeConfigs(
      Object.entries({
        Config: {
          Type: 'AWS::Lambda::EventInvokeConfig',
          Properties: {
            FunctionName: { Ref: 'Fn' },
            Qualifier: '$LATEST',
            MaximumRetryAttempts: 0,
            MaximumEventAgeInSeconds: 300,
          },
        },
        // An alias's config is not the one an invocation of the function's ARN gets.
        AliasConfig: {
          Type: 'AWS::Lambda::EventInvokeConfig',
          Properties: {
            FunctionName: { Ref: 'Other' },
            Qualifier: 'live',
            MaximumRetryAttempts: 1,
          },
        },
      }),
      FUNCTIONS,
    );
    expect([...configs]).toEqual([
      ['Fn', { maximumRetryAttempts: 0, maximumEventAgeSeconds: 300 }],
    ]);
    expect(LAMBDA_ASYNC_DEFAULTS).toEqual({
      maximumRetryAttempts: 2,
      maximumEventAgeSeconds: 21_600,
    });
  });

  it('names each rule it does not run, with the reason, and refuses an invalid schedule', () => {
    const { schedules, notRun } = read({
      Pattern: {
        Type: 'AWS::Events::Rule',
        Properties: {
          EventPattern: { source: ['aws.s3'] },
          Targets: [{ Arn: { 'Fn::GetAtt': ['Fn', 'Arn'] }, Id: 'T' }],
        },
      },
      Transformed: rule(target({ InputTransformer: { InputTemplate: '"<x>"' } })),
      Unresolved: rule(target({ Input: { Ref: 'Elsewhere' } })),
      Wildcard: rule(target({ InputPath: '$.detail.*' })),
      // A rule for something that is not one of the functions is not the runtime's concern.
      Elsewhere: rule({ Targets: [{ Arn: 'arn:aws:sns:us-east-1:1:topic', Id: 'T' }] }),
    });
    expect(schedules).toEqual([]);
    expect(notRun).toEqual([
      'Pattern: an event pattern rule (only schedules run locally)',
      'Transformed → Fn: an input transformer',
      'Unresolved → Fn: an Input that does not resolve locally (no local value for Elsewhere)',
      'Wildcard → Fn: the InputPath $.detail.* (dot notation and indices only)',
    ]);
    expect(() => read({ Bad: rule({ ScheduleExpression: 'rate(1 minutes)' }) })).toThrow(
      /ScheduleExpression is not valid: rate\(1 minutes\)/,
    );
  });
});

describe('the rule runner and Lambda’s asynchronous invocations', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: Date.parse('2026-12-05T15:42:30Z') });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const schedule = (
    o: Partial<Omit<LocalSchedule, 'expression'>> & { expression: string },
  ): LocalSchedule => ({
    logicalId: 'Rule',
    ruleName: 'app-Rule',
    functionLogicalId: 'Fn',
    input: { kind: 'event' },
    enabled: true,
    targetId: 'Target0',
    ...o,
    expression: parseScheduleExpression(o.expression),
  });

  /**
   * Starts a runner whose function fails its first `failures` invocations, with Lambda's
   * retries as `config` says.
   */
  const run = (
    schedules: LocalSchedule[],
    failures = 0,
    config: AsyncInvokeConfig = LAMBDA_ASYNC_DEFAULTS,
  ) => {
    const calls: { at: string; event: unknown }[] = [];
    const outcomes: AsyncOutcome[] = [];
    const invoke = async (_: string, event: unknown) => {
      calls.push({ at: new Date().toISOString(), event });
      if (calls.length <= failures) throw new Error(`failure ${calls.length}`);
      return { ok: calls.length };
    };
    const invocations = asyncInvocations({
      invoke,
      configOf: () => config,
      describe: () => ({ arn: 'arn:aws:lambda:us-east-1:000000000000:function:app-Fn' }),
      deliver: async () => {},
    });
    const runner = startRuleRunner({
      schedules,
      region: 'us-east-1',
      account: '000000000000',
      invocations,
      invoke,
      report: (_, outcome) => outcomes.push(outcome),
    });
    return { calls, outcomes, runner: { ...runner, stop: invocations.stop } };
  };

  it('runs a cron rule on the minutes it names and a rate rule every period from the start', async () => {
    const { calls, runner } = run([
      schedule({ expression: 'cron(0/20 * * * ? *)' }),
      schedule({ expression: 'rate(15 minutes)', logicalId: 'Rate', ruleName: 'app-Rate' }),
    ]);
    await vi.advanceTimersByTimeAsync(45 * 60_000);
    expect(calls.map((c) => c.at)).toEqual([
      '2026-12-05T15:57:30.000Z',
      '2026-12-05T16:00:00.000Z',
      '2026-12-05T16:12:30.000Z',
      '2026-12-05T16:20:00.000Z',
      '2026-12-05T16:27:30.000Z',
    ]);
    // EventBridge's scheduled event, at the time the run was due, naming the rule.
    expect(calls[1]?.event).toMatchObject({
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      time: '2026-12-05T16:00:00Z',
      resources: ['arn:aws:events:us-east-1:000000000000:rule/app-Rule'],
      detail: {},
    });
    runner.stop();
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    expect(calls).toHaveLength(5);
  });

  it('retries a failed run with the same event after one and then two minutes, as Lambda does', async () => {
    const { calls, outcomes, runner } = run([schedule({ expression: 'cron(0 * * * ? *)' })], 2);
    await vi.advanceTimersByTimeAsync(25 * 60_000);
    expect(calls.map((c) => c.at)).toEqual([
      '2026-12-05T16:00:00.000Z',
      '2026-12-05T16:01:00.000Z',
      '2026-12-05T16:03:00.000Z',
    ]);
    expect(new Set(calls.map((c) => JSON.stringify(c.event))).size).toBe(1);
    expect(outcomes.map((o) => [o.attempt, o.error?.message, o.retryAtMs, o.result])).toEqual([
      [1, 'failure 1', Date.parse('2026-12-05T16:01:00Z'), undefined],
      [2, 'failure 2', Date.parse('2026-12-05T16:03:00Z'), undefined],
      [3, undefined, undefined, { ok: 3 }],
    ]);
    runner.stop();
  });

  it('gives up after the retries the config allows, or once the event would be too old', async () => {
    /** The times an hourly rule's always-failing function is invoked within its first hour. */
    const attempts = async (config: AsyncInvokeConfig) => {
      const { calls, runner } = run([schedule({ expression: 'cron(0 * * * ? *)' })], 5, config);
      await vi.advanceTimersByTimeAsync(60 * 60_000);
      runner.stop();
      return calls.map((c) => c.at);
    };
    expect(await attempts({ maximumRetryAttempts: 0, maximumEventAgeSeconds: 21_600 })).toEqual([
      '2026-12-05T16:00:00.000Z',
    ]);
    // A two-minute wait would take the event past its 90 s maximum age: one retry only.
    expect(await attempts({ maximumRetryAttempts: 2, maximumEventAgeSeconds: 90 })).toEqual([
      '2026-12-05T17:00:00.000Z',
      '2026-12-05T17:01:00.000Z',
    ]);
  });

  it('skips a disabled rule’s runs until it is enabled again, as DisableRule and EnableRule do', async () => {
    const { calls, runner } = run([
      schedule({ expression: 'cron(0 * * * ? *)', enabled: false, ruleName: 'app-Hourly' }),
    ]);
    await vi.advanceTimersByTimeAsync(90 * 60_000);
    expect(calls).toEqual([]);
    expect(runner.enabled('app-Hourly')).toBe(false);
    runner.setEnabled('app-Hourly', true);
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    runner.setEnabled('app-Hourly', false);
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    expect(calls.map((c) => c.at)).toEqual(['2026-12-05T18:00:00.000Z']);
    runner.stop();
  });

  it('runs a rule put while running from when it was put, only with the targets it has, and no more once deleted', async () => {
    const { calls, runner } = run([schedule({ expression: 'cron(0 * * * ? *)' })]);
    const tagged = (n: number) => ({
      targetId: `T${n}`,
      functionLogicalId: 'Fn',
      input: { kind: 'constant' as const, value: n },
    });
    // At 15:42:30: a rule with no target runs nothing, though its runs are counted from now.
    runner.putRule({
      name: 'app-New',
      expression: parseScheduleExpression('rate(10 minutes)'),
      enabled: true,
    });
    await vi.advanceTimersByTimeAsync(15 * 60_000);
    runner.putTargets('app-New', [tagged(1), tagged(2)]);
    runner.removeTargets('app-Rule', ['Target0']);
    await vi.advanceTimersByTimeAsync(20 * 60_000);
    // The hourly rule's only target was removed before 16:00: it ran nothing.
    expect(calls.map((c) => [c.at, c.event])).toEqual([
      ['2026-12-05T16:02:30.000Z', 1],
      ['2026-12-05T16:02:30.000Z', 2],
      ['2026-12-05T16:12:30.000Z', 1],
      ['2026-12-05T16:12:30.000Z', 2],
    ]);
    expect(runner.rules().map((r) => [r.name, r.targets.map((t) => t.targetId)])).toEqual([
      ['app-Rule', []],
      ['app-New', ['T1', 'T2']],
    ]);
    // A new schedule counts from its change (16:17:30); the same schedule again changes nothing.
    runner.putTargets('app-New', [{ ...tagged(2), input: { kind: 'constant', value: 3 } }]);
    runner.putRule({
      name: 'app-New',
      expression: parseScheduleExpression('rate(1 hour)'),
      enabled: true,
    });
    runner.putRule({
      name: 'app-New',
      expression: parseScheduleExpression('rate(1 hour)'),
      enabled: true,
      description: 'hourly',
    });
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    expect(calls.slice(4).map((c) => [c.at, c.event])).toEqual([
      ['2026-12-05T17:17:30.000Z', 1],
      ['2026-12-05T17:17:30.000Z', 3],
    ]);
    expect(runner.rules()[1]).toMatchObject({ name: 'app-New', description: 'hourly' });
    runner.deleteRule('app-New');
    await vi.advanceTimersByTimeAsync(3 * 60 * 60_000);
    expect(calls).toHaveLength(6);
    expect(runner.schedules()).toEqual([]);
    runner.stop();
  });

  it('runs, for any changes made while it runs, exactly the runs the rules as changed name', async () => {
    type Step =
      | { kind: 'put'; name: string; every: number; enabled: boolean }
      | { kind: 'targets' | 'remove'; name: string; ids: string[] }
      | { kind: 'delete'; name: string }
      | { kind: 'enabled'; name: string; enabled: boolean }
      | { kind: 'advance'; minutes: number };
    const name = fc.constantFrom('app-A', 'app-B');
    const ids = fc.subarray(['T1', 'T2'], { minLength: 1 });
    const step: fc.Arbitrary<Step> = fc.oneof(
      {
        weight: 2,
        arbitrary: fc.record({
          kind: fc.constant('put' as const),
          name,
          every: fc.integer({ min: 1, max: 4 }),
          enabled: fc.boolean(),
        }),
      },
      {
        weight: 3,
        arbitrary: fc.record({
          kind: fc.constantFrom('targets' as const, 'remove' as const),
          name,
          ids,
        }),
      },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), name }) },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant('enabled' as const),
          name,
          enabled: fc.boolean(),
        }),
      },
      {
        weight: 4,
        arbitrary: fc.record({
          kind: fc.constant('advance' as const),
          minutes: fc.integer({ min: 1, max: 12 }),
        }),
      },
    );
    // Both rules start with targets, so that most runs have something to run.
    const setup: Step[] = [
      { kind: 'put', name: 'app-A', every: 2, enabled: true },
      { kind: 'put', name: 'app-B', every: 3, enabled: true },
      { kind: 'targets', name: 'app-A', ids: ['T1', 'T2'] },
      { kind: 'targets', name: 'app-B', ids: ['T1'] },
    ];
    const START = Date.parse('2026-12-05T15:42:30Z');
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 20 }), async (drawn) => {
        const steps = [...setup, ...drawn];
        vi.setSystemTime(START);
        const { calls, runner } = run([]);
        // The model: each rule's period, when it was counted from, its state and its targets.
        const model = new Map<
          string,
          { every: number; fromMs: number; enabled: boolean; targets: string[] }
        >();
        const expected: string[] = [];
        let now = START;
        for (const x of steps) {
          const rule = 'name' in x ? model.get(x.name) : undefined;
          if (x.kind === 'put') {
            runner.putRule({
              name: x.name,
              expression: parseScheduleExpression(
                `rate(${x.every} minute${x.every > 1 ? 's' : ''})`,
              ),
              enabled: x.enabled,
            });
            model.set(x.name, {
              every: x.every,
              // The same schedule again keeps counting from when it was first put.
              fromMs: rule?.every === x.every ? rule.fromMs : now,
              enabled: x.enabled,
              targets: rule?.targets ?? [],
            });
          } else if (x.kind === 'targets') {
            runner.putTargets(
              x.name,
              x.ids.map((id) => ({
                targetId: id,
                functionLogicalId: 'Fn',
                input: { kind: 'constant', value: `${x.name}/${id}` },
              })),
            );
            if (rule) rule.targets = [...rule.targets.filter((t) => !x.ids.includes(t)), ...x.ids];
          } else if (x.kind === 'remove') {
            runner.removeTargets(x.name, x.ids);
            if (rule) rule.targets = rule.targets.filter((t) => !x.ids.includes(t));
          } else if (x.kind === 'delete') {
            runner.deleteRule(x.name);
            model.delete(x.name);
          } else if (x.kind === 'enabled') {
            runner.setEnabled(x.name, x.enabled);
            if (rule) rule.enabled = x.enabled;
          } else if (x.kind === 'advance') {
            const until = now + x.minutes * 60_000;
            for (const [ruleName, r] of model) {
              const period = r.every * 60_000;
              const first = r.fromMs + period * (Math.floor((now - r.fromMs) / period) + 1);
              for (let at = first; at <= until && r.enabled; at += period)
                for (const t of r.targets)
                  expected.push(`${new Date(at).toISOString()} ${ruleName}/${t}`);
            }
            await vi.advanceTimersByTimeAsync(x.minutes * 60_000);
            now = until;
          }
        }
        runner.stop();
        expect(calls.map((c) => `${c.at} ${String(c.event)}`).sort()).toEqual(expected.sort());
      }),
      { numRuns: 150 },
    );
  });

  it('sends a constant Input or the part an InputPath names, and runs a rule at once when asked', async () => {
    const { calls, runner } = run([
      schedule({ expression: 'cron(0 * * * ? *)', input: { kind: 'constant', value: { a: 1 } } }),
      schedule({ expression: 'cron(0 * * * ? *)', input: { kind: 'path', path: ['time'] } }),
      schedule({ expression: 'cron(0 * * * ? *)', input: { kind: 'path', path: ['missing'] } }),
    ]);
    await vi.advanceTimersByTimeAsync(20 * 60_000);
    expect(calls.map((c) => c.event)).toEqual([{ a: 1 }, '2026-12-05T16:00:00Z', null]);
    const disabled = schedule({ expression: 'rate(1 day)', enabled: false });
    const now = run([disabled]);
    expect(await now.runner.runNow(disabled)).toEqual({ ok: 1 });
    await vi.advanceTimersByTimeAsync(2 * 86_400_000);
    expect(now.calls).toHaveLength(1);
    now.runner.stop();
    runner.stop();
  });
});
