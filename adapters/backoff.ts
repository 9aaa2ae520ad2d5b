/** Waits `ms` milliseconds: the pause between an adapter's attempts of one call. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * "Full jitter" backoff before attempt `attempt + 1` (1-based `attempt`): a random wait up to
 * `baseMs` doubled per attempt, so writers that collided once do not collide again in step.
 */
export const jitteredBackoff = (attempt: number, baseMs: number) =>
  Math.random() * baseMs * 2 ** (attempt - 1);
