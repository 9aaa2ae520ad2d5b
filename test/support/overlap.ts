/** Proving that calls overlap, without timing them. */
import type { FaultInjector } from '../../harness/faults.ts';
import { waitFor } from '../../local/net.ts';
import { DEADLINE_MS } from './deadlines.ts';

/**
 * Holds the next `held` calls at `site` until that many have started. Callers that make them
 * one at a time never get there: their first call fails at the deadline, naming what it waited
 * for. Callers that make them concurrently go on at once.
 */
export const holdUntilConcurrent = (faults: FaultInjector, site: string, held: number): void => {
  const count = () => faults.calls.get(site) ?? 0;
  const before = count();
  const release = waitFor(async () => count() - before >= held, {
    timeoutMs: DEADLINE_MS,
    what: `${held} calls of ${site} to be in flight at once`,
  });
  faults.add({ site, kind: 'hold', release, times: held });
};

/** The most calls at `site` in flight at once in a stretch of the injector's trace. */
export const mostInFlight = (trace: readonly string[], site: string): number => {
  let inFlight = 0;
  let most = 0;
  for (const entry of trace) {
    if (entry === site) most = Math.max(most, ++inFlight);
    else if (entry === `${site} done`) inFlight--;
  }
  return most;
};
