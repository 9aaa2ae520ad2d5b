/**
 * Lambda's asynchronous invocations (`InvocationType: Event`, and every run of an EventBridge
 * rule): the event is queued and the function invoked; a failure is retried with the same event
 * a minute and then two minutes later, as often as the function's event invoke config allows
 * (twice by default) and while the event is younger than its maximum age (six hours by default).
 */
import type { AsyncInvokeConfig } from './rules.ts';

/** What one attempt at an asynchronous invocation did. */
export interface AsyncOutcome {
  readonly result?: unknown;
  readonly error?: Error;
  /** 1 for the invocation itself, 2 and 3 for Lambda's retries. */
  readonly attempt: number;
  /** When the failed attempt is tried again (epoch ms); undefined: it is not. */
  readonly retryAtMs?: number;
}

export interface AsyncInvocationsOptions {
  /** Invokes a function (by logical id) with an event, as the Invoke API does. */
  readonly invoke: (functionLogicalId: string, event: unknown) => Promise<unknown>;
  /** The function's event invoke config, read at each failure (a swap may have changed it). */
  readonly configOf: (functionLogicalId: string) => AsyncInvokeConfig;
  /** Lambda's waits before its first and second retries: one and two minutes. */
  readonly retryDelaysMs?: readonly number[];
}

export interface AsyncInvocations {
  /** Queues one invocation; `report` is told about each attempt. */
  enqueue(
    functionLogicalId: string,
    event: unknown,
    report?: (outcome: AsyncOutcome) => void,
  ): void;
  /** Runs `run` at `atMs` unless stopped first (timers shared with the retries). */
  at(atMs: number, run: () => void): void;
  stop(): void;
}

const LAMBDA_RETRY_DELAYS_MS = [60_000, 120_000];
/** setTimeout's longest wait; a later time is reached in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export const asyncInvocations = (options: AsyncInvocationsOptions): AsyncInvocations => {
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  const delays = options.retryDelaysMs ?? LAMBDA_RETRY_DELAYS_MS;

  const at = (atMs: number, run: () => void) => {
    if (stopped) return;
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        if (Date.now() < atMs) at(atMs, run);
        else run();
      },
      Math.min(Math.max(atMs - Date.now(), 0), MAX_TIMER_MS),
    );
    timer.unref();
    timers.add(timer);
  };

  const attempt = (
    fn: string,
    event: unknown,
    queuedAtMs: number,
    n: number,
    report: ((outcome: AsyncOutcome) => void) | undefined,
  ) => {
    options.invoke(fn, event).then(
      (result) => report?.({ result, attempt: n }),
      (error: unknown) => {
        const config = options.configOf(fn);
        const delay = delays[n - 1];
        const retryAtMs = delay === undefined ? undefined : Date.now() + delay;
        const retried =
          !stopped &&
          retryAtMs !== undefined &&
          n <= config.maximumRetryAttempts &&
          retryAtMs - queuedAtMs <= config.maximumEventAgeSeconds * 1000;
        report?.({
          error: error instanceof Error ? error : new Error(String(error)),
          attempt: n,
          ...(retried ? { retryAtMs } : {}),
        });
        if (retried) at(retryAtMs, () => attempt(fn, event, queuedAtMs, n + 1, report));
      },
    );
  };

  return {
    enqueue: (fn, event, report) => attempt(fn, event, Date.now(), 1, report),
    at,
    stop: () => {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
};
