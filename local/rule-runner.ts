/**
 * Runs scheduled rules as EventBridge does: at each time the expression names (from when the
 * runtime started, for a rate), the target function is invoked asynchronously with its input,
 * so Lambda retries a failed run as the function's event invoke config says
 * (`async-invocations.ts`).
 */
import type { AsyncInvocations, AsyncOutcome } from './async-invocations.ts';
import { atPath, type LocalSchedule } from './rules.ts';
import { nextRun } from './schedule-expression.ts';
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

/** What the rule's target is sent for a run scheduled at `timeMs`. */
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
}

/** Arms every rule; a disabled one's runs are skipped, and the runs stop when `invocations` do. */
export const startRuleRunner = (options: RuleRunnerOptions): RuleRunner => {
  const createdAtMs = Date.now();
  const states = new Map(options.schedules.map((s) => [s.ruleName, s.enabled]));
  const arm = (schedule: LocalSchedule, afterMs: number) => {
    const due = nextRun(schedule.expression, afterMs, createdAtMs);
    if (due === undefined) return;
    options.invocations.at(due, () => {
      if (states.get(schedule.ruleName))
        options.invocations.enqueue(
          schedule.functionLogicalId,
          ruleInput(schedule, { ...options, timeMs: due }),
          (outcome) => options.report?.(schedule, outcome),
        );
      arm(schedule, due);
    });
  };
  for (const schedule of options.schedules) arm(schedule, createdAtMs);
  return {
    enabled: (ruleName) => states.get(ruleName) ?? false,
    setEnabled: (ruleName, enabled) => {
      if (states.has(ruleName)) states.set(ruleName, enabled);
    },
    runNow: (schedule) =>
      options.invoke(
        schedule.functionLogicalId,
        ruleInput(schedule, { ...options, timeMs: Date.now() }),
      ),
  };
};
