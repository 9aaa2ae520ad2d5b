import { describe, expect, it } from 'vitest';
import type { FreshnessRun } from '../../harness/bench/freshness.ts';
import { findSustainedRate } from '../../harness/bench/sustained-rate.ts';

const BATCH = 50;

/**
 * A runtime that serves `capacity` events a second: above it the queue grows by the deficit's
 * batches over the two thirds between the stream's first and last thirds; below it stays level.
 */
const runtimeOf =
  (capacity: number, ran: { rate: number; seconds: number }[]) =>
  async (rate: number, seconds: number): Promise<FreshnessRun> => {
    ran.push({ rate, seconds });
    const growth = Math.max(0, ((rate - capacity) / BATCH) * ((2 * seconds) / 3));
    return {
      rateEventsPerSec: rate,
      seconds,
      events: rate * seconds,
      p50Ms: 500,
      p95Ms: 1000,
      p99Ms: 2000 + growth,
      warmupSeconds: 20,
      backlogAtEnd: 4 + growth,
      backlogGrowth: growth,
      backlogAtStart: 4,
      backlogMax: 6 + growth,
      putsPerHourObjectPerMinute: 30,
      maxPutsPerHourObjectPerWindow: 1,
      putsPerHourObjectPerWindow: 1,
      perWindowSeconds: 2,
      coalesceWindowSeconds: 2,
      failedMessages: {},
    };
  };

/** The search from a 60-s base stream at 100 events a second, on a runtime of `capacity`. */
const searchOn = async (capacity: number) => {
  const ran: { rate: number; seconds: number }[] = [];
  const stream = runtimeOf(capacity, ran);
  const found = await findSustainedRate({
    base: await stream(100, 60),
    stream,
    batchSize: BATCH,
    stepSeconds: 20,
    confirmSeconds: 60,
  });
  return { found, ran };
};

describe('the sustained-rate search', () => {
  it('steps down to a rate a full-length stream holds when a short step passed a slow leak', async () => {
    const { found, ran } = await searchOn(660);
    // 700 falls behind by 40 events a second: 11 batches over a 20-s step (allowed 14), 32 over
    // a 60-s stream.
    expect(ran.slice(1)).toEqual([
      { rate: 200, seconds: 20 },
      { rate: 400, seconds: 20 },
      { rate: 800, seconds: 20 },
      { rate: 600, seconds: 20 },
      { rate: 700, seconds: 20 },
      { rate: 700, seconds: 60 },
      { rate: 650, seconds: 60 },
    ]);
    expect(found.sustainedEventsPerSec).toBe(650);
    expect(found.atSustained.seconds).toBe(60);
    expect(found.steps.map((s) => [s.rate, s.kind, s.keptUp])).toEqual([
      [200, 'search', true],
      [400, 'search', true],
      [800, 'search', false],
      [600, 'search', true],
      [700, 'search', true],
      [700, 'confirm', false],
      [650, 'confirm', true],
    ]);
  });

  it('reports no sustained rate when the base stream already falls behind', async () => {
    const { found, ran } = await searchOn(50);
    expect(found.sustainedEventsPerSec).toBe(0);
    expect(ran).toHaveLength(1);
  });

  it('falls back to the base stream when no confirmation holds', async () => {
    const ran: { rate: number; seconds: number }[] = [];
    const steady = runtimeOf(1000, ran);
    const base = await steady(100, 60);
    // Short steps always pass, full-length streams above the base always grow.
    const found = await findSustainedRate({
      base,
      stream: (rate, seconds) =>
        seconds === 60 ? runtimeOf(100, ran)(rate, seconds) : steady(rate, seconds),
      batchSize: BATCH,
      stepSeconds: 20,
      confirmSeconds: 60,
      maxRate: 400,
      confirmations: 2,
    });
    expect(found.sustainedEventsPerSec).toBe(100);
    expect(found.atSustained).toBe(base);
    expect(found.steps.filter((s) => s.kind === 'confirm').map((s) => s.rate)).toEqual([400, 300]);
  });
});
