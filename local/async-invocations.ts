/**
 * Lambda's asynchronous invocations (`InvocationType: Event`, and every run of an EventBridge
 * rule): the event is queued under one request id and the function invoked; a failure is retried
 * with the same event and request id a minute and then two minutes later, as often as the
 * function's event invoke config allows (twice by default) and while the event is younger than
 * its maximum age (six hours by default). A throttled invocation (reserved concurrency in use)
 * is no failure: it is tried again from a second later, the pause doubling to five minutes, for
 * as long as the event is younger than its maximum age, and it spends none of the retries. The
 * outcome goes where the function says: an invocation record to its on-success or on-failure
 * destination, a discarded event to its dead-letter queue.
 */
import { randomUUID } from 'node:crypto';
import { type AsyncInvokeConfig, invocationRecord, type RecordCondition } from './async-config.ts';
import { InvocationError } from './lambda-environment.ts';
import { ASYNC_THROTTLE_BACKOFF, type Backoff, ThrottledError } from './throttling.ts';

/** What one attempt at an asynchronous invocation did. */
export interface AsyncOutcome {
  readonly result?: unknown;
  readonly error?: Error;
  /** 1 for the invocation itself, 2 and 3 for Lambda's retries. */
  readonly attempt: number;
  /** When the failed attempt is tried again (epoch ms); undefined: it is not. */
  readonly retryAtMs?: number;
}

/** What Lambda sends a destination or a dead-letter queue. */
export type Delivery =
  | { readonly kind: 'record'; readonly record: ReturnType<typeof invocationRecord> }
  | {
      readonly kind: 'dead-letter';
      readonly event: unknown;
      readonly requestId: string;
      readonly errorMessage: string;
    };

/** How the runtime lends its functions to the asynchronous invocations. */
export interface AsyncFunctions {
  /** Invokes a function (by logical id) with an event under a request id, as Invoke does. */
  invoke(functionLogicalId: string, event: unknown, requestId: string): Promise<unknown>;
  /** The function's event invoke config, read when needed (a swap may have changed it). */
  configOf(functionLogicalId: string): AsyncInvokeConfig;
  /** The function's ARN (invocation records name it) and its dead-letter queue, if any. */
  describe(functionLogicalId: string): { readonly arn: string; readonly deadLetterArn?: string };
  /** Sends to a destination or a dead-letter queue, by its ARN. */
  deliver(arn: string, delivery: Delivery): Promise<void>;
}

export interface AsyncInvocationsOptions extends AsyncFunctions {
  /** Lambda's waits before its first and second retries: one and two minutes. */
  readonly retryDelaysMs?: readonly number[];
  /** Pauses between tries of a throttled invocation: Lambda's, one second to five minutes. */
  readonly throttleBackoff?: Backoff;
  /** Told when a delivery fails (a destination that is gone): Lambda drops it too. */
  readonly warn?: (message: string) => void;
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

/** What a failed invocation reports, in the shape Lambda's runtime reports it. */
const reportedError = (error: Error) =>
  error instanceof InvocationError
    ? error.reported()
    : { errorType: error.name, errorMessage: error.message };

interface Queued {
  readonly fn: string;
  readonly event: unknown;
  readonly requestId: string;
  readonly queuedAtMs: number;
  readonly report: ((outcome: AsyncOutcome) => void) | undefined;
  /** The pause before the next try, should this one be throttled. */
  throttlePauseMs: number;
}

export const asyncInvocations = (options: AsyncInvocationsOptions): AsyncInvocations => {
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  const delays = options.retryDelaysMs ?? LAMBDA_RETRY_DELAYS_MS;
  const throttleBackoff = options.throttleBackoff ?? ASYNC_THROTTLE_BACKOFF;

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

  const deliver = (arn: string | undefined, delivery: Delivery) => {
    if (arn === undefined || stopped) return;
    options
      .deliver(arn, delivery)
      .catch((error: unknown) =>
        options.warn?.(`Lambda could not deliver to ${arn}: ${(error as Error).message}`),
      );
  };

  /** The record of an invocation's outcome, to its destination. */
  const settle = (q: Queued, attempts: number, outcome: { result?: unknown; error?: Error }) => {
    const config = options.configOf(q.fn);
    const { arn, deadLetterArn } = options.describe(q.fn);
    const condition: RecordCondition = outcome.error
      ? attempts > config.maximumRetryAttempts
        ? 'RetriesExhausted'
        : 'EventAgeExceeded'
      : 'Success';
    const record = invocationRecord({
      requestId: q.requestId,
      functionArn: arn,
      condition,
      attempts,
      event: q.event,
      response: outcome.error ? reportedError(outcome.error) : (outcome.result ?? null),
      failed: outcome.error !== undefined,
    });
    deliver(outcome.error ? config.onFailure : config.onSuccess, { kind: 'record', record });
    if (outcome.error)
      deliver(deadLetterArn, {
        kind: 'dead-letter',
        event: q.event,
        requestId: q.requestId,
        errorMessage: reportedError(outcome.error).errorMessage,
      });
  };

  const attempt = (q: Queued, n: number) => {
    options.invoke(q.fn, q.event, q.requestId).then(
      (result) => {
        q.report?.({ result, attempt: n });
        settle(q, n, { result });
      },
      (thrown: unknown) => {
        const error = thrown instanceof Error ? thrown : new Error(String(thrown));
        const config = options.configOf(q.fn);
        const young = (atMs: number) => atMs - q.queuedAtMs <= config.maximumEventAgeSeconds * 1000;
        if (error instanceof ThrottledError) {
          // Not run: the same attempt again later, until the event is too old (then n - 1 ran).
          const retryAtMs = Date.now() + q.throttlePauseMs;
          q.throttlePauseMs = Math.min(q.throttlePauseMs * 2, throttleBackoff.mostMs);
          const retried = !stopped && young(retryAtMs);
          q.report?.({ error, attempt: n, ...(retried ? { retryAtMs } : {}) });
          if (retried) at(retryAtMs, () => attempt(q, n));
          else settle(q, n - 1, { error });
          return;
        }
        const delay = delays[n - 1];
        const retryAtMs = delay === undefined ? undefined : Date.now() + delay;
        const retried =
          !stopped &&
          retryAtMs !== undefined &&
          n <= config.maximumRetryAttempts &&
          young(retryAtMs);
        q.report?.({ error, attempt: n, ...(retried ? { retryAtMs } : {}) });
        if (retried) at(retryAtMs, () => attempt(q, n + 1));
        else settle(q, n, { error });
      },
    );
  };

  return {
    enqueue: (fn, event, report) =>
      attempt(
        {
          fn,
          event,
          requestId: randomUUID(),
          queuedAtMs: Date.now(),
          report,
          throttlePauseMs: throttleBackoff.firstMs,
        },
        1,
      ),
    at,
    stop: () => {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
};
