/**
 * Runs scheduled rules as EventBridge and Lambda do: at each time the expression names (from
 * when the runtime started, for a rate), the target function is invoked asynchronously with its
 * input, and a run whose function fails is retried by "Lambda" with the same event, a minute and
 * then two minutes later, as often as the function's event invoke config allows and while the
 * event is younger than its maximum age.
 */
import { atPath, type LocalSchedule } from './rules.ts';
import { nextRun } from './schedule-expression.ts';
import { scheduledEvent } from './triggers.ts';

/** What one attempt at a scheduled run did. */
export interface ScheduledOutcome {
  readonly result?: unknown;
  readonly error?: Error;
  /** 1 for the run itself, 2 and 3 for Lambda's retries. */
  readonly attempt: number;
  /** When the failed attempt is tried again (epoch ms); undefined: it is not. */
  readonly retryAtMs?: number;
}

export interface RuleRunnerOptions {
  readonly schedules: readonly LocalSchedule[];
  readonly region: string;
  readonly account: string;
  /** Invokes a function (by logical id) with an event, as the Invoke API does. */
  readonly invoke: (functionLogicalId: string, event: unknown) => Promise<unknown>;
  readonly report?: (schedule: LocalSchedule, outcome: ScheduledOutcome) => void;
  /** Lambda's waits before its first and second retries: one and two minutes. */
  readonly retryDelaysMs?: readonly number[];
}

const LAMBDA_RETRY_DELAYS_MS = [60_000, 120_000];
/** setTimeout's longest wait; a later run is reached in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

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
  stop(): void;
}

export const startRuleRunner = (options: RuleRunnerOptions): RuleRunner => {
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  const delays = options.retryDelaysMs ?? LAMBDA_RETRY_DELAYS_MS;
  const later = (atMs: number, run: () => void) => {
    if (stopped) return;
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        if (Date.now() < atMs) later(atMs, run);
        else run();
      },
      Math.min(Math.max(atMs - Date.now(), 0), MAX_TIMER_MS),
    );
    timer.unref();
    timers.add(timer);
  };

  /** One asynchronous invocation: the attempt, then Lambda's retries of a failure. */
  const attempt = (schedule: LocalSchedule, event: unknown, queuedAtMs: number, n: number) => {
    options.invoke(schedule.functionLogicalId, event).then(
      (result) => options.report?.(schedule, { result, attempt: n }),
      (error: unknown) => {
        const delay = delays[n - 1];
        const retryAtMs = delay === undefined ? undefined : Date.now() + delay;
        const retried =
          !stopped &&
          retryAtMs !== undefined &&
          n <= schedule.asyncInvoke.maximumRetryAttempts &&
          retryAtMs - queuedAtMs <= schedule.asyncInvoke.maximumEventAgeSeconds * 1000;
        options.report?.(schedule, {
          error: error instanceof Error ? error : new Error(String(error)),
          attempt: n,
          ...(retried ? { retryAtMs } : {}),
        });
        if (retried) later(retryAtMs, () => attempt(schedule, event, queuedAtMs, n + 1));
      },
    );
  };

  const createdAtMs = Date.now();
  const arm = (schedule: LocalSchedule, afterMs: number) => {
    const at = nextRun(schedule.expression, afterMs, createdAtMs);
    if (at === undefined) return;
    later(at, () => {
      const input = ruleInput(schedule, { ...options, timeMs: at });
      attempt(schedule, input, Date.now(), 1);
      arm(schedule, at);
    });
  };
  for (const schedule of options.schedules) if (schedule.enabled) arm(schedule, createdAtMs);

  return {
    runNow: (schedule) =>
      options.invoke(
        schedule.functionLogicalId,
        ruleInput(schedule, { ...options, timeMs: Date.now() }),
      ),
    stop: () => {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
};
