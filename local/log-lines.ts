/** Reading the functions' log lines: what `onceflow logs` and the edge's CloudWatch Logs share. */
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import * as v from 'valibot';

/** What gives a line its time: Powertools' `timestamp`, an EMF line's `_aws.Timestamp`. */
const TimedLineSchema = v.object({
  timestamp: v.optional(v.string()),
  _aws: v.optional(v.object({ Timestamp: v.optional(v.number()) })),
});

/** The time that starts a line of the Node.js runtime's own (an invocation's error, a timeout). */
const LEADING_TIME = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)[\t ]/;

/**
 * A log line's time: Powertools' `timestamp`, an EMF line's `_aws.Timestamp`, or the time a
 * runtime line starts with; undefined for other lines (they take the time of the line before).
 */
export const lineTime = (line: string): number | undefined => {
  if (!line.startsWith('{')) {
    const leading = LEADING_TIME.exec(line)?.[1];
    return leading === undefined ? undefined : Date.parse(leading);
  }
  try {
    const parsed = v.safeParse(TimedLineSchema, JSON.parse(line));
    if (!parsed.success) return undefined;
    const { timestamp, _aws } = parsed.output;
    return timestamp === undefined ? _aws?.Timestamp : Date.parse(timestamp);
  } catch {
    return undefined;
  }
};

/**
 * The new complete lines of a log file the runtime is still writing, read from where the last
 * read ended. A read can end inside a line or inside a character: both wait for the next read.
 */
export class LogTail {
  readonly #file: string;
  #offset = 0;
  #rest = '';
  #decoder = new StringDecoder('utf8');

  constructor(file: string) {
    this.#file = file;
  }

  read(): string[] {
    if (!existsSync(this.#file)) return [];
    const size = statSync(this.#file).size;
    if (size < this.#offset) {
      // A new runtime started the file afresh: nothing read before belongs to it.
      this.#offset = 0;
      this.#rest = '';
      this.#decoder = new StringDecoder('utf8');
    }
    if (size === this.#offset) return [];
    const buffer = Buffer.alloc(size - this.#offset);
    const fd = openSync(this.#file, 'r');
    try {
      readSync(fd, buffer, 0, buffer.length, this.#offset);
    } finally {
      closeSync(fd);
    }
    this.#offset = size;
    const lines = (this.#rest + this.#decoder.write(buffer)).split('\n');
    this.#rest = lines.pop() ?? '';
    return lines;
  }
}
