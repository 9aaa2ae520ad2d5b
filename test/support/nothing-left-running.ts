/**
 * Test files share their worker's module cache (`isolate: false` in `vitest.config.ts`), so a
 * file must leave nothing running behind it: a poller, a server, a socket or a child process
 * left open would cost the next files CPU, or answer their requests. After each file, what it
 * opened gets a deadline to close; anything still open then fails the file, named.
 */
import { afterAll } from 'vitest';
import { waitFor } from '../../local/net.ts';
import { DEADLINE_MS } from './deadlines.ts';

// Standard streams and the worker's channel to vitest: the worker's own, opened on first use.
const WORKER_OWN = new Set(['PipeWrap', 'TTYWrap']);

const open = (): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo())
    if (!WORKER_OWN.has(kind)) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
};

// This file runs again before each test file: what is open now was open before the file began.
const before = open();

const leftOpen = (): string[] =>
  [...open()]
    .filter(([kind, n]) => n > (before.get(kind) ?? 0))
    .map(([kind, n]) => `${n - (before.get(kind) ?? 0)} × ${kind}`);

afterAll(async () => {
  // A socket's close is an event away, a child's exit a few more; a clean file waits not at all.
  await waitFor(() => leftOpen().length === 0, {
    // Shorter only in this check's own test (test/fixtures/left-running).
    timeoutMs: Number(process.env.ONCEFLOW_LEFT_RUNNING_WAIT_MS ?? DEADLINE_MS),
    what: 'what the test file opened to close',
  }).catch((cause: unknown) => {
    throw new Error(`left running after the file: ${leftOpen().join(', ')}`, { cause });
  });
});
