/**
 * The local runtime's function logs: one file per function (`<dir>/<name>.log`), started afresh
 * with each run (the emulators' state is new too), which every environment of the function
 * writes to, restarts included; without a directory, the output is discarded.
 */
import { createWriteStream, mkdirSync, type WriteStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

export const functionLogs = (dir: string | undefined) => {
  if (dir) mkdirSync(dir, { recursive: true });
  const files = new Map<string, WriteStream>();
  const fileOf = (functionName: string, logDir: string): WriteStream => {
    let file = files.get(functionName);
    if (!file) {
      file = createWriteStream(join(logDir, `${functionName}.log`), { flags: 'w' });
      files.set(functionName, file);
    }
    return file;
  };
  return {
    /**
     * Starts each function's file afresh, before any of them runs: a function that has not run
     * yet in this runtime would otherwise show the last run's lines (to `onceflow logs`, and its
     * metrics to `onceflow status`).
     */
    begin: (functionNames: readonly string[]) => {
      // Emptied now: a stream opens its file later, once the event loop turns.
      if (dir) for (const name of functionNames) writeFileSync(join(dir, `${name}.log`), '');
    },
    /** Where a function's environment sends one of its output streams. */
    output: (functionName: string) => (stream: Readable) => {
      if (!dir) {
        stream.resume();
        return;
      }
      // Written chunk by chunk rather than piped: every environment (restarts included) would
      // add its own listeners to the one file stream, past Node's warning threshold.
      const log = fileOf(functionName, dir);
      stream.on('data', (chunk: Buffer) => log.write(chunk));
    },
    /** Where a function's environment writes the lines Lambda logs itself (START, REPORT…). */
    platform: (functionName: string) => (text: string) => {
      if (dir) fileOf(functionName, dir).write(text);
    },
    /** The file a function's log is written to, when there is one. */
    fileOf: (functionName: string) => (dir ? join(dir, `${functionName}.log`) : undefined),
    close: () => {
      for (const file of files.values()) file.end();
    },
  };
};
