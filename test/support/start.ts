/** `npm start` as a user runs it: a child process of the project's Node 24. */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import { waitFor } from '../../local/net.ts';
import { DEADLINE_MS } from './deadlines.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const NODE = join(ROOT, 'node_modules', '.bin', 'node');

export interface Started {
  readonly child: ChildProcess;
  readonly pid: number;
  output(): string;
  /** The exit code (null: killed by a signal). */
  readonly exited: Promise<number | null>;
  /** Waits until the output shows `text` (or the process ended). */
  until(text: string): Promise<void>;
}

/** Starts `npm start -- <args>` from `project` (default this one). */
export const launchStart = (
  args: readonly string[],
  o: { readonly env?: NodeJS.ProcessEnv; readonly project?: string } = {},
): Started => {
  const child = spawn(NODE, ['local/start.mjs', ...args], {
    cwd: o.project ?? ROOT,
    env: o.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const stream of [child.stdout, child.stderr])
    stream?.on('data', (c: Buffer) => {
      output += c.toString();
    });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return {
    child,
    pid: child.pid ?? 0,
    output: () => output,
    exited,
    until: async (text) => {
      await waitFor(
        () => output.includes(text) || child.exitCode !== null || child.signalCode !== null,
        { timeoutMs: DEADLINE_MS, what: `npm start to print "${text}"` },
      );
      expect(output).toContain(text);
    },
  };
};
