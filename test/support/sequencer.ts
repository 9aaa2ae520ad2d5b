/**
 * Longest files first, so that no long file starts last and runs on alone while the other
 * workers idle. Vitest orders by the durations of the last run on this machine, but a fresh
 * clone (every CI run) has none and falls back to file sizes, which say little here: the chaos
 * command's test is one of the shortest files and one of the longest runs. `test/durations.json`
 * carries the durations of a recorded run for that case (`npm run test:durations` records the
 * last run's).
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as v from 'valibot';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** test file (relative to the project) → seconds. */
const DurationsSchema = v.record(v.string(), v.number());

export const DURATIONS_FILE = join(import.meta.dirname, '..', 'durations.json');

const recorded = (): Record<string, number> =>
  v.parse(DurationsSchema, JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')));

/** What is known of a file's last run. */
export interface LastRun {
  readonly failed: boolean;
  readonly ms: number;
}

/**
 * Files never run first (a new one may be long), then those that failed last time (their answer
 * matters most), then the longest first: vitest's own order, with recorded durations.
 */
export const longestFirst = <T>(files: readonly T[], lastRun: (file: T) => LastRun | undefined) =>
  [...files].sort((a, b) => {
    const x = lastRun(a);
    const y = lastRun(b);
    if (!x || !y) return x ? 1 : y ? -1 : 0;
    if (x.failed !== y.failed) return x.failed ? -1 : 1;
    return y.ms - x.ms;
  });

/**
 * The shortest first, files never run last: for a run that stops at its first failure (a
 * mutation run), which most often comes from a short file. Longest first, a mutation a unit test
 * catches in a second waited minutes for the long files that took the workers first.
 */
export const shortestFirst = <T>(files: readonly T[], lastRun: (file: T) => LastRun | undefined) =>
  [...files].sort((a, b) => {
    const x = lastRun(a);
    const y = lastRun(b);
    if (!x || !y) return x ? -1 : y ? 1 : 0;
    return x.ms - y.ms;
  });

/** The order `ONCEFLOW_TEST_ORDER` asks for: `shortest-first`, or by default the longest first. */
export const TEST_ORDER_VARIABLE = 'ONCEFLOW_TEST_ORDER';

export default class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = recorded();
    const root = this.ctx.config.root;
    const order =
      process.env[TEST_ORDER_VARIABLE] === 'shortest-first' ? shortestFirst : longestFirst;
    return order(files, (spec) => {
      const last = this.ctx.cache.getTestSpecificationResult(spec);
      if (last) return { failed: last.failed, ms: last.duration };
      const seconds = durations[relative(root, spec.moduleId)];
      return seconds === undefined ? undefined : { failed: false, ms: seconds * 1000 };
    });
  }
}
