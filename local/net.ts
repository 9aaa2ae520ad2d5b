import { createServer } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

/** A port the OS says is free on 127.0.0.1 right now. */
export const freePort = (preferred = 0): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (preferred !== 0 && error.code === 'EADDRINUSE') resolve(freePort(0));
      else reject(error);
    });
    server.listen(preferred, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });

export interface WaitOptions {
  readonly timeoutMs: number;
  readonly what: string;
  readonly intervalMs?: number;
}

/** A wait reached its deadline: what it waited for did not happen in time. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
}

/**
 * Polls `check` until it returns true, or fails naming what it waited for at the deadline
 * (`WaitTimeoutError`). An error `check` throws ends the wait at once, as itself.
 */
export const waitFor = async (
  check: () => Promise<boolean> | boolean,
  options: WaitOptions,
): Promise<void> => {
  const deadline = Date.now() + options.timeoutMs;
  let interval = options.intervalMs ?? 25;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline)
      throw new WaitTimeoutError(
        `timed out after ${options.timeoutMs} ms waiting for ${options.what}`,
      );
    await delay(interval);
    interval = Math.min(interval * 2, 250);
  }
};
