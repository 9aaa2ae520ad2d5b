/**
 * Runs scheduled rules as EventBridge does: at each time the expression names (from when the
 * rule was created, for a rate), each of the rule's targets is invoked asynchronously with its
 * input, so Lambda retries a failed run as the function's event invoke config says
 * (`async-invocations.ts`). The rules start as the template sets them and change as EventBridge's
 * `PutRule`, `PutTargets`, `RemoveTargets` and `DeleteRule` change them (`events-api.ts`).
 */
import type { AsyncInvocations, AsyncOutcome } from './async-invocations.ts';
import { atPath, type LocalSchedule } from './rules.ts';
import { nextRun, type ScheduleExpression } from './schedule-expression.ts';
import { scheduledEvent } from './triggers.ts';

export interface RuleRunnerOptions {
  readonly schedules: readonly LocalSchedule[];
  readonly region: string;
  readonly account: string;
  /** The runtime's asynchronous invocations (shared with the Invoke API's `Event` type). */
  readonly invocations: AsyncInvocations;
  /** Invokes a function (by logical id) at once, for `runNow`. */
  readonly invoke: (functionLogicalId: string, event: unknown) => Promise<unknown>;
  readonly report?: (schedule: LocalSchedule, outcome: AsyncOutcome) => void;
}

/** What `PutRule` sets: everything of a rule but its targets. */
export interface RuleSettings {
  readonly name: string;
  readonly expression: ScheduleExpression;
  readonly enabled: boolean;
  readonly description?: string;
}

/** One of a rule's targets, as `PutTargets` sets it. */
export type RuleTarget = Pick<
  LocalSchedule,
  'targetId' | 'functionLogicalId' | 'input' | 'retryPolicy'
>;

/** A rule as EventBridge holds it, its targets each a (rule, target) schedule. */
export interface LocalRule extends RuleSettings {
  readonly targets: readonly LocalSchedule[];
}

/** What the target is sent for a run scheduled at `timeMs`. */
export const ruleInput = (
  schedule: LocalSchedule,
  o: { readonly region: string; readonly account: string; readonly timeMs: number },
): unknown => {
  const event = scheduledEvent({
    account: o.account,
    region: o.region,
    ruleArn: `arn:aws:events:${o.region}:${o.account}:rule/${schedule.ruleName}`,
    timeMs: o.timeMs,
  });
  const { input } = schedule;
  if (input.kind === 'constant') return input.value;
  if (input.kind === 'path') return atPath(event, input.path) ?? null;
  return event;
};

export interface RuleRunner {
  /** Runs a rule's function now, once, and gives back its result (no retries). */
  runNow(schedule: LocalSchedule): Promise<unknown>;
  /** Whether the rule (by name) runs on its schedule: its `State`, until changed. */
  enabled(ruleName: string): boolean;
  /** `EnableRule` and `DisableRule`: a disabled rule's runs are skipped until it is enabled. */
  setEnabled(ruleName: string, enabled: boolean): void;
  /** Every rule, by name, with its targets (a rule may have none). */
  rules(): readonly LocalRule[];
  /** Every (rule, target) pair: what runs. */
  schedules(): readonly LocalSchedule[];
  /**
   * `PutRule`: creates a rule, or replaces an existing one's settings and keeps its targets. A
   * new schedule is counted from now, as EventBridge counts a rate from the rule's change.
   */
  putRule(settings: RuleSettings): void;
  /** `PutTargets`: adds each target, or replaces the one with its `Id`. */
  putTargets(ruleName: string, targets: readonly RuleTarget[]): void;
  /** `RemoveTargets`: the targets with these ids no longer run. */
  removeTargets(ruleName: string, ids: readonly string[]): void;
  /** `DeleteRule`: the rule and any run of it still armed are gone. */
  deleteRule(ruleName: string): void;
}

interface HeldRule extends RuleSettings {
  /** The template's logical id, or the rule's name for one put through the API. */
  readonly logicalId: string;
  readonly createdAtMs: number;
  /** Changes when the schedule does or the rule is deleted: a run armed before does nothing. */
  readonly generation: number;
  readonly targets: readonly RuleTarget[];
}

const schedulesOf = (rule: HeldRule): LocalSchedule[] =>
  rule.targets.map((target) => ({
    logicalId: rule.logicalId,
    ruleName: rule.name,
    expression: rule.expression,
    enabled: rule.enabled,
    ...(rule.description === undefined ? {} : { description: rule.description }),
    ...target,
  }));

/** Arms every rule; a disabled one's runs are skipped, and the runs stop when `invocations` do. */
export const startRuleRunner = (options: RuleRunnerOptions): RuleRunner => {
  const held = new Map<string, HeldRule>();
  let generations = 0;
  const arm = (name: string, generation: number, afterMs: number) => {
    const rule = held.get(name);
    if (rule?.generation !== generation) return;
    const due = nextRun(rule.expression, afterMs, rule.createdAtMs);
    if (due === undefined) return;
    options.invocations.at(due, () => {
      const now = held.get(name);
      if (now?.generation !== generation) return;
      if (now.enabled)
        for (const schedule of schedulesOf(now))
          options.invocations.enqueue(
            schedule.functionLogicalId,
            ruleInput(schedule, { ...options, timeMs: due }),
            (outcome) => options.report?.(schedule, outcome),
          );
      arm(name, generation, due);
    });
  };
  const hold = (rule: Omit<HeldRule, 'generation'>) => {
    const generation = ++generations;
    held.set(rule.name, { ...rule, generation });
    arm(rule.name, generation, rule.createdAtMs);
  };

  const startedAtMs = Date.now();
  for (const s of options.schedules) {
    const rule = held.get(s.ruleName);
    const target: RuleTarget = {
      targetId: s.targetId,
      functionLogicalId: s.functionLogicalId,
      input: s.input,
      ...(s.retryPolicy === undefined ? {} : { retryPolicy: s.retryPolicy }),
    };
    if (rule) held.set(s.ruleName, { ...rule, targets: [...rule.targets, target] });
    else
      hold({
        name: s.ruleName,
        logicalId: s.logicalId,
        expression: s.expression,
        enabled: s.enabled,
        ...(s.description === undefined ? {} : { description: s.description }),
        createdAtMs: startedAtMs,
        targets: [target],
      });
  }

  const change = (name: string, f: (rule: HeldRule) => HeldRule) => {
    const rule = held.get(name);
    if (rule) held.set(name, f(rule));
  };
  return {
    enabled: (ruleName) => held.get(ruleName)?.enabled ?? false,
    setEnabled: (ruleName, enabled) => change(ruleName, (rule) => ({ ...rule, enabled })),
    rules: () =>
      [...held.values()].map((rule) => ({
        name: rule.name,
        expression: rule.expression,
        enabled: rule.enabled,
        ...(rule.description === undefined ? {} : { description: rule.description }),
        targets: schedulesOf(rule),
      })),
    schedules: () => [...held.values()].flatMap(schedulesOf),
    putRule: (settings) => {
      const rule = held.get(settings.name);
      if (rule && rule.expression.text === settings.expression.text) {
        const { description: _, ...kept } = rule;
        held.set(settings.name, { ...kept, ...settings });
        return;
      }
      hold({
        logicalId: rule?.logicalId ?? settings.name,
        targets: rule?.targets ?? [],
        ...settings,
        createdAtMs: Date.now(),
      });
    },
    putTargets: (ruleName, targets) =>
      change(ruleName, (rule) => ({
        ...rule,
        targets: [
          ...rule.targets.filter((t) => !targets.some((x) => x.targetId === t.targetId)),
          ...targets,
        ],
      })),
    removeTargets: (ruleName, ids) =>
      change(ruleName, (rule) => ({
        ...rule,
        targets: rule.targets.filter((t) => !ids.includes(t.targetId)),
      })),
    deleteRule: (ruleName) => {
      held.delete(ruleName);
    },
    runNow: (schedule) =>
      options.invoke(
        schedule.functionLogicalId,
        ruleInput(schedule, { ...options, timeMs: Date.now() }),
      ),
  };
};
