/** The operator CLI as a user runs it: a child process of the project's Node 24. */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');

export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts `onceflow <args>`; its output is read from the returned process. */
export const spawnOnceflow = (
  args: readonly string[],
  env: Record<string, string> = {},
): ChildProcessWithoutNullStreams =>
  spawn(join(ROOT, 'node_modules', '.bin', 'node'), ['cli/onceflow.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
  });

/** Runs `onceflow <args>` to its end (asynchronously: the edge may run in this process). */
export const onceflow = (
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<Result> =>
  new Promise((resolve) => {
    const child = spawnOnceflow(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
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
