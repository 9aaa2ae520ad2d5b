/**
 * Reserved concurrency's throttles and what each caller makes of them, as Lambda does: an SQS
 * mapping retries a throttled batch with a growing pause until its messages' visibility timeout
 * runs out; an asynchronous invocation is tried again from a second later, doubling, until the
 * event is too old, without spending its retries. Timers are faked.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type AsyncInvokeConfig, LAMBDA_ASYNC_DEFAULTS } from '../../local/async-config.ts';
import { asyncInvocations, type Delivery } from '../../local/async-invocations.ts';
import { reservationRefusal } from '../../local/lambda-quotas.ts';
import {
  mappingRetryDeadline,
  retryWhileThrottled,
  ThrottledError,
} from '../../local/throttling.ts';

const START = Date.parse('2026-12-05T15:00:00Z');

beforeEach(() => {
  vi.useFakeTimers({ now: START });
});
afterEach(() => {
  vi.useRealTimers();
});

/** An invocation throttled `throttles` times, then failing `failures` times, then answering. */
const invocation = (throttles: number, failures = 0) => {
  const at: number[] = [];
  const invoke = async () => {
    at.push(Date.now() - START);
    if (at.length <= throttles) throw new ThrottledError('app-Fn', 1);
    if (at.length <= throttles + failures) throw new Error(`failure ${at.length - throttles}`);
    return { ok: at.length };
  };
  return { at, invoke };
};

describe('a mapping’s throttled invocation', () => {
  it('runs once a slot is free, after pauses that double from 100 ms to one second', async () => {
    const { at, invoke } = invocation(6);
    const result = retryWhileThrottled(invoke, { untilMs: START + 30_000 });
    await vi.advanceTimersByTimeAsync(10_000);
    await expect(result).resolves.toEqual({ ok: 7 });
    expect(at).toEqual([0, 100, 300, 700, 1500, 2500, 3500]);
  });

  it('gives the throttle back rather than try at or after the deadline', async () => {
    const { at, invoke } = invocation(Number.POSITIVE_INFINITY);
    const result = retryWhileThrottled(invoke, { untilMs: START + 2000 });
    const settled = expect(result).rejects.toBeInstanceOf(ThrottledError);
    await vi.advanceTimersByTimeAsync(10_000);
    await settled;
    // The next try would be at 2,500 ms: past the deadline, so none.
    expect(at).toEqual([0, 100, 300, 700, 1500]);
  });

  it('tries no more once a late timer has carried it past the deadline', async () => {
    const { at, invoke } = invocation(Number.POSITIVE_INFINITY);
    const result = retryWhileThrottled(invoke, { untilMs: START + 250 });
    const settled = expect(result).rejects.toBeInstanceOf(ThrottledError);
    // The first throttle is taken at 0 ms: the pause of 100 ms would end before the deadline.
    await vi.advanceTimersByTimeAsync(0);
    expect(at).toEqual([0]);
    // The machine stalls: the clock reaches 400 ms before the 100-ms pause's timer fires.
    vi.setSystemTime(START + 400);
    await vi.advanceTimersByTimeAsync(1000);
    await settled;
    expect(at).toEqual([0]);
  });

  it('stops retrying a tenth of the visibility timeout, at most a second, before it ends', () => {
    expect(mappingRetryDeadline(START, 2) - START).toBe(1800);
    expect(mappingRetryDeadline(START, 180) - START).toBe(179_000);
  });

  it('gives the throttle back at its next try once the mapping has been disabled', async () => {
    const { at, invoke } = invocation(Number.POSITIVE_INFINITY);
    let disabled = false;
    const result = retryWhileThrottled(invoke, {
      untilMs: START + 30_000,
      abandoned: () => disabled,
    });
    const settled = expect(result).rejects.toBeInstanceOf(ThrottledError);
    await vi.advanceTimersByTimeAsync(400);
    disabled = true;
    await vi.advanceTimersByTimeAsync(10_000);
    await settled;
    // Tries at 0, 100 and 300 ms; the one due at 700 ms is not made.
    expect(at).toEqual([0, 100, 300]);
  });

  it('throws any other failure at once, without retrying it', async () => {
    const { at, invoke } = invocation(0, 1);
    const settled = expect(
      retryWhileThrottled(invoke, { untilMs: START + 30_000 }),
    ).rejects.toThrow('failure 1');
    // Time a retry would take (the invocation's second try would answer).
    await vi.advanceTimersByTimeAsync(10_000);
    await settled;
    expect(at).toEqual([0]);
  });
});

describe('an asynchronous invocation throttled', () => {
  const run = (throttles: number, failures: number, config: AsyncInvokeConfig) => {
    const { at, invoke } = invocation(throttles, failures);
    const deliveries: [string, Delivery][] = [];
    const invocations = asyncInvocations({
      invoke,
      configOf: () => config,
      describe: () => ({
        arn: 'arn:aws:lambda:us-east-1:000000000000:function:app-Fn',
        deadLetterArn: 'dlq',
      }),
      deliver: async (arn, delivery) => {
        deliveries.push([arn, delivery]);
      },
    });
    invocations.enqueue('Fn', { n: 1 });
    return { at, deliveries, stop: invocations.stop };
  };
  const conditionOf = (delivery: Delivery | undefined) =>
    delivery?.kind === 'record' ? delivery.record.requestContext : undefined;

  it('is tried again from a second later, doubling, and spends none of its retries', async () => {
    const config = { ...LAMBDA_ASYNC_DEFAULTS, maximumRetryAttempts: 1, onFailure: 'failures' };
    const { at, deliveries, stop } = run(3, 1, config);
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    stop();
    // Throttled at 0, 1 and 3 s; run at 7 s and failed; its one retry a minute later succeeds.
    expect(at).toEqual([0, 1000, 3000, 7000, 67_000]);
    expect(deliveries).toEqual([]);
  });

  it('is dropped once the next try would be past the event’s maximum age, none of it run', async () => {
    const config = { maximumRetryAttempts: 2, maximumEventAgeSeconds: 60, onFailure: 'failures' };
    const { at, deliveries, stop } = run(Number.POSITIVE_INFINITY, 0, config);
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    stop();
    // The pause after the try at 31 s would be 32 s: past 60 s.
    expect(at).toEqual([0, 1000, 3000, 7000, 15_000, 31_000]);
    expect(deliveries.map(([arn]) => arn)).toEqual(['failures', 'dlq']);
    expect(conditionOf(deliveries[0]?.[1])).toMatchObject({
      condition: 'EventAgeExceeded',
      approximateInvokeCount: 0,
    });
    expect(deliveries[1]?.[1]).toMatchObject({
      kind: 'dead-letter',
      errorMessage: 'Rate Exceeded.',
    });
  });
});

describe('a reservation of concurrency as Lambda accepts it', () => {
  it('leaves at least 100 of the account’s 1,000 unreserved', () => {
    expect(reservationRefusal(0, 0)).toBeUndefined();
    expect(reservationRefusal(900, 0)).toBeUndefined();
    expect(reservationRefusal(400, 500)).toBeUndefined();
    expect(reservationRefusal(401, 500)).toEqual({
      code: 'InvalidParameterValueException',
      message:
        "Specified ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of [100].",
    });
  });

  it('refuses a negative or fractional value as a validation error', () => {
    for (const value of [-1, 2.5])
      expect(reservationRefusal(value, 0)).toEqual({
        code: 'ValidationException',
        message: `1 validation error detected: Value '${value}' at 'reservedConcurrentExecutions' failed to satisfy constraint: Member must have value greater than or equal to 0`,
      });
  });
});
