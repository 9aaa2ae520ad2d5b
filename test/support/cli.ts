/** The operator CLI as a user runs it: a child process of the project's Node 24. */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { join } from 'node:path';
import { LOCAL_CREDENTIALS } from '../../local/emulators.ts';
import { type ProcessResult, runProcess } from '../../local/process.ts';
import type { LocalRuntime } from '../../local/runtime.ts';
import { writeLocalState } from '../../local/state.ts';

export const ROOT = join(import.meta.dirname, '..', '..');

export type Result = ProcessResult;

/** Starts `onceflow <args>`; its output is read from the returned process. */
export const spawnOnceflow = (
  args: readonly string[],
  env: Record<string, string> = {},
): ChildProcessWithoutNullStreams =>
  spawn(join(ROOT, 'node_modules', '.bin', 'node'), ['cli/onceflow.mjs', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });

/** Runs `onceflow <args>` to its end (asynchronously: the edge may run in this process). */
export const onceflow = (
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<Result> =>
  runProcess(join(ROOT, 'node_modules', '.bin', 'node'), ['cli/onceflow.mjs', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });

/**
 * Runs `onceflow <args>` to its end, telling `onStderr` all its stderr so far each time more
 * comes: for a test that acts on what the command says while it runs.
 */
export const onceflowWatched = (
  args: readonly string[],
  onStderr: (soFar: string) => void,
): Promise<Result> =>
  runProcess(join(ROOT, 'node_modules', '.bin', 'node'), ['cli/onceflow.mjs', ...args], {
    cwd: ROOT,
    env: process.env,
    onStderr,
  });

/** Starts a command that runs until stopped (`logs --follow`), collecting what it prints. */
export const follow = (args: readonly string[]) => {
  const child = spawnOnceflow(args);
  let stdout = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.resume();
  return { stdout: () => stdout, stop: () => child.kill('SIGINT') };
};

/**
 * Writes in `dir` the state file `npm start -- --keep` would write for this runtime, which
 * `--target local` reads; returns its path.
 */
export const recordState = (runtime: LocalRuntime, dir: string): string => {
  const state = join(dir, `${runtime.stack.stackName}.json`);
  writeLocalState(state, {
    endpoint: runtime.endpoint,
    region: runtime.region,
    stackName: runtime.stack.stackName,
    outputs: { ...runtime.stack.outputs },
    credentials: { ...LOCAL_CREDENTIALS },
    pid: process.pid,
    startedAt: new Date().toISOString(),
    readLagMs: runtime.emulators.readLagMs,
  });
  return state;
};
