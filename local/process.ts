/** A child process run to its end, its output collected (asynchronously: the caller's event loop may serve it). */
import { spawn } from 'node:child_process';

export interface ProcessResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `command args` to its exit; rejects only when it cannot start. */
export const runProcess = (
  command: string,
  args: readonly string[],
  options: {
    readonly cwd?: string;
    readonly env?: NodeJS.ProcessEnv;
    /** Told all of stderr so far each time more comes (to act on what the process says). */
    readonly onStderr?: (soFar: string) => void;
  } = {},
): Promise<ProcessResult> =>
  new Promise((resolve, reject) => {
    const { onStderr, ...spawnOptions } = options;
    const child = spawn(command, args, { ...spawnOptions, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      onStderr?.(stderr);
    });
    child.once('error', reject);
    // 'close', not 'exit': the output may still be arriving when the process has exited.
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
