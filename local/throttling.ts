/**
 * Lambda's reserved concurrency, as the local runtime enforces it: a function with reserved
 * concurrency n runs at most n invocations at once, whatever invokes it, and refuses the next
 * with a throttle (`TooManyRequestsException`, reason
 * `ReservedFunctionConcurrentInvocationLimitExceeded`); 0 refuses every invocation, the kill
 * switch of `aws lambda put-function-concurrency`. What a throttle becomes depends on the
 * caller, as on AWS: a synchronous `Invoke` gets a 429; an SQS event source mapping retries with
 * a growing pause while the messages are still hidden, and then drops them back to the queue
 * (each such round counts towards the DLQ); an asynchronous invocation is retried
 * until its maximum event age.
 */

export const THROTTLE_REASON = 'ReservedFunctionConcurrentInvocationLimitExceeded';

/** An invocation Lambda refused because the function already runs its reserved concurrency. */
export class ThrottledError extends Error {
  override readonly name = 'TooManyRequestsException';
  readonly reason = THROTTLE_REASON;

  readonly functionName: string;
  readonly reservedConcurrency: number;

  constructor(functionName: string, reservedConcurrency: number) {
    // Lambda's own message, which names neither the function nor the limit.
    super('Rate Exceeded.');
    this.functionName = functionName;
    this.reservedConcurrency = reservedConcurrency;
  }
}

/** Pauses between a throttled invocation's retries, growing from `firstMs` to `mostMs`. */
export interface Backoff {
  readonly firstMs: number;
  readonly mostMs: number;
}

/**
 * Lambda's documented backoff for a throttled asynchronous invocation: from one second, doubling,
 * to five minutes.
 */
export const ASYNC_THROTTLE_BACKOFF: Backoff = { firstMs: 1000, mostMs: 300_000 };

/**
 * An SQS mapping's, which Lambda does not document beyond "gradually": from 100 ms, doubling, to
 * one second, so that a slot freed a moment later is taken a moment later.
 */
export const MAPPING_THROTTLE_BACKOFF: Backoff = { firstMs: 100, mostMs: 1000 };

/**
 * Until when an SQS mapping retries a throttled batch, as Lambda retries it while its messages
 * are hidden (they then return to the queue, a receive spent): a tenth of the visibility timeout,
 * at most a second, short of it. SQS started that timeout before the receive's answer arrived,
 * and a try after it would run messages another receive may hold, or the DLQ.
 */
export const mappingRetryDeadline = (receivedAtMs: number, visibilityTimeoutSeconds: number) => {
  const hiddenMs = visibilityTimeoutSeconds * 1000;
  return receivedAtMs + hiddenMs - Math.min(1000, hiddenMs / 10);
};

/**
 * Runs `invoke`, and again after a growing pause while it is throttled, as long as the next try
 * would start before `untilMs`; then the last throttle is thrown. No try starts at or after
 * `untilMs`, even when a timer fires late, nor once `abandoned()` says so (a mapping disabled
 * meanwhile stops retrying: its messages return to the queue). Any other failure is thrown at once.
 */
export const retryWhileThrottled = async <T>(
  invoke: () => Promise<T>,
  {
    untilMs,
    backoff = MAPPING_THROTTLE_BACKOFF,
    abandoned = () => false,
  }: { untilMs: number; backoff?: Backoff; abandoned?: () => boolean },
): Promise<T> => {
  let pause = backoff.firstMs;
  for (;;) {
    try {
      return await invoke();
    } catch (error) {
      if (!(error instanceof ThrottledError) || Date.now() + pause >= untilMs || abandoned())
        throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
      if (Date.now() >= untilMs || abandoned()) throw error;
      pause = Math.min(pause * 2, backoff.mostMs);
    }
  }
};
