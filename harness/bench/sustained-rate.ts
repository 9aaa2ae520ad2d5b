/**
 * The highest rate the local runtime sustains: short freshness streams shortlist a rate, a
 * full-length stream confirms it (see `findSustainedRate`).
 */
import type { FreshnessRun } from './freshness.ts';

/**
 * Whether a stream's orders queue stayed level: its mean depth over the stream's last third at
 * most a second of batches above its mean over the first third, and so its depth at the end (one
 * reading at the end alone can fall on a lull of a queue that is falling behind; a mean alone can
 * hide a rise at the very end). Depth counts messages in flight as well as those waiting.
 */
export const keptUp = (run: FreshnessRun, batchSize: number): boolean => {
  const second = Math.ceil(run.rateEventsPerSec / batchSize);
  return run.backlogGrowth <= second && run.backlogAtEnd <= Math.ceil(run.backlogAtStart) + second;
};

/** One stream of the sustained-rate search. */
export interface RateStep {
  readonly rate: number;
  readonly seconds: number;
  /** `search`: a short step; `confirm`: a full-length stream at a rate the steps found. */
  readonly kind: 'search' | 'confirm';
  readonly keptUp: boolean;
  readonly p99Ms: number;
  readonly backlogMax: number;
  readonly backlogAtStart: number;
  readonly backlogGrowth: number;
  readonly backlogAtEnd: number;
  readonly failedMessages: Readonly<Record<string, number>>;
}

export interface SustainedRate {
  /** The highest rate whose full-length stream kept the queue level (0: not even the base). */
  readonly sustainedEventsPerSec: number;
  /** The full-length stream at that rate: its percentiles are the freshness at the sustained rate. */
  readonly atSustained: FreshnessRun;
  readonly steps: readonly RateStep[];
}

/**
 * The highest rate the runtime sustains. Short steps double the rate from the base until the queue
 * grows, then `bisections` steps halve the bracket (rates in multiples of `granularity`). A short
 * step only shortlists: a queue falling behind by a few percent stays within the allowance over a
 * short stream, so the rate found must keep the queue level over a full-length stream too. When it
 * does not, the next candidate is halfway down to the next rate a step sustained, up to
 * `confirmations` full-length streams; the base rate's own full-length stream (`base`) stands
 * when none holds.
 */
export const findSustainedRate = async (options: {
  /** The full-length stream at the base rate, already run. */
  readonly base: FreshnessRun;
  readonly stream: (rate: number, seconds: number) => Promise<FreshnessRun>;
  readonly batchSize: number;
  readonly stepSeconds: number;
  /** A confirming stream's length: the base stream's. */
  readonly confirmSeconds: number;
  readonly maxRate?: number;
  readonly bisections?: number;
  readonly confirmations?: number;
  readonly granularity?: number;
  readonly onStep?: (step: RateStep) => void;
}): Promise<SustainedRate> => {
  const { base, batchSize } = options;
  const maxRate = options.maxRate ?? 3200;
  const granularity = options.granularity ?? 50;
  const steps: RateStep[] = [];
  const run = async (rate: number, kind: RateStep['kind']) => {
    const result = await options.stream(
      rate,
      kind === 'search' ? options.stepSeconds : options.confirmSeconds,
    );
    const step: RateStep = {
      rate,
      seconds: result.seconds,
      kind,
      keptUp: keptUp(result, batchSize),
      p99Ms: result.p99Ms,
      backlogMax: result.backlogMax,
      backlogAtStart: result.backlogAtStart,
      backlogGrowth: result.backlogGrowth,
      backlogAtEnd: result.backlogAtEnd,
      failedMessages: result.failedMessages,
    };
    steps.push(step);
    options.onStep?.(step);
    return { result, held: step.keptUp };
  };
  if (!keptUp(base, batchSize)) return { sustainedEventsPerSec: 0, atSustained: base, steps };
  const passed = [base.rateEventsPerSec];
  let failedAt: number | undefined;
  for (let rate = base.rateEventsPerSec * 2; failedAt === undefined && rate <= maxRate; rate *= 2)
    if ((await run(rate, 'search')).held) passed.push(rate);
    else failedAt = rate;
  const between = (lo: number, hi: number) => {
    const mid = Math.round((lo + hi) / 2 / granularity) * granularity;
    return mid > lo && mid < hi ? mid : undefined;
  };
  for (let n = 0; n < (options.bisections ?? 2) && failedAt !== undefined; n++) {
    const lo = Math.max(...passed);
    const mid = between(lo, failedAt);
    if (mid === undefined) break;
    if ((await run(mid, 'search')).held) passed.push(mid);
    else failedAt = mid;
  }
  // Confirm, from the highest rate a step sustained down.
  let candidate = Math.max(...passed);
  for (let n = 0; n < (options.confirmations ?? 3); n++) {
    if (candidate === base.rateEventsPerSec) break;
    const { result, held } = await run(candidate, 'confirm');
    if (held) return { sustainedEventsPerSec: candidate, atSustained: result, steps };
    const below = Math.max(...passed.filter((r) => r < candidate));
    candidate = between(below, candidate) ?? below;
  }
  return { sustainedEventsPerSec: base.rateEventsPerSec, atSustained: base, steps };
};
