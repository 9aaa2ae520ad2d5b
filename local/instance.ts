/**
 * One local runtime per state directory: a lock file (`runtime.lock`) names the process that
 * owns the directory's logs, data and state file, and the endpoint it serves once it has one.
 * A second start in the same directory finds it and refuses; a lock left by a dead process (or
 * one whose endpoint no longer answers) is taken over.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';

const LockSchema = v.object({
  pid: v.number(),
  startedAt: v.string(),
  endpoint: v.optional(v.string()),
});
type Lock = v.InferOutput<typeof LockSchema>;

/** Another runtime owns this state directory. */
export class InstanceRunningError extends Error {
  override readonly name = 'InstanceRunningError';
}

const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, but another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

const answers = async (endpoint: string): Promise<boolean> => {
  const res = await fetch(endpoint, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
  return res !== undefined;
};

const readLock = (file: string): Lock | undefined => {
  try {
    const parsed = v.safeParse(LockSchema, JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.output : undefined;
  } catch {
    return undefined;
  }
};

export interface InstanceClaim {
  /** Records the endpoint, so that a second start can name it. */
  publish(endpoint: string): void;
  /** Gives the directory up (only while this process still owns it). */
  release(): void;
}

/** Claims `stateDir` for this process, or throws InstanceRunningError naming the owner. */
export const claimInstance = async (stateDir: string): Promise<InstanceClaim> => {
  mkdirSync(stateDir, { recursive: true });
  const file = join(stateDir, 'runtime.lock');
  const mine: Lock = { pid: process.pid, startedAt: new Date().toISOString() };
  const write = (lock: Lock, flag: 'w' | 'wx') =>
    writeFileSync(file, `${JSON.stringify(lock)}\n`, { flag });
  try {
    write(mine, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const owner = readLock(file);
    const live =
      owner !== undefined &&
      owner.pid !== process.pid &&
      pidAlive(owner.pid) &&
      (owner.endpoint === undefined || (await answers(owner.endpoint)));
    if (owner && live) {
      throw new InstanceRunningError(
        `onceflow already runs from ${stateDir}: pid ${owner.pid}, ` +
          `${owner.endpoint ? `endpoint ${owner.endpoint}` : 'still starting'}, since ${owner.startedAt}. ` +
          'Use that one (npx onceflow local endpoint), stop it, or run another beside it with --state-dir <dir>.',
      );
    }
    write(mine, 'w');
  }
  const owned = () => readLock(file)?.pid === process.pid;
  return {
    publish: (endpoint) => {
      if (owned()) write({ ...mine, endpoint }, 'w');
    },
    release: () => {
      if (owned()) rmSync(file, { force: true });
    },
  };
};
