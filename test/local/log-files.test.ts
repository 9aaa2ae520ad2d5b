/**
 * The runtime writes each worker's output to its log file chunk by chunk, so a reader can find a
 * line, or a character, cut in two. Readers of the file serve whole lines only.
 */
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LogTail, lineTime } from '../../local/log-lines.ts';
import { eventsOf } from '../../local/logs-api.ts';

const logFile = () => join(mkdtempSync(join(tmpdir(), 'onceflow-log-')), 'fn.log');
const line = (message: string) => JSON.stringify({ level: 'INFO', message });

describe('following a log file', () => {
  it('returns a line only once it is complete, even when a read ends inside a character', () => {
    const file = logFile();
    const whole = Buffer.from(`${line('first')}\n${line('prix 12 €')}\n`);
    const cut = whole.indexOf(Buffer.from('€')) + 1; // inside the three bytes of '€'
    writeFileSync(file, whole.subarray(0, cut));
    const tail = new LogTail(file);
    expect(tail.read()).toEqual([line('first')]);
    expect(tail.read()).toEqual([]);
    appendFileSync(file, whole.subarray(cut));
    expect(tail.read()).toEqual([line('prix 12 €')]);
  });

  it('starts again from the top when a new runtime starts the file afresh', () => {
    const file = logFile();
    writeFileSync(file, `${line('old run, a long line')}\n${line('old, cut')}`.slice(0, -3));
    const tail = new LogTail(file);
    expect(tail.read()).toEqual([line('old run, a long line')]);
    writeFileSync(file, `${line('new')}\n`);
    expect(tail.read()).toEqual([line('new')]);
  });

  it('returns nothing while the file does not exist yet', () => {
    expect(new LogTail(logFile()).read()).toEqual([]);
  });
});

describe('the edge’s log events from a log file', () => {
  it('serves complete lines only, so a line being written keeps no event id of its own', () => {
    const file = logFile();
    const full = `${line('applied')}\n${line('failed')}\n`;
    writeFileSync(file, full.slice(0, -10));
    expect(eventsOf(file, 's').map((e) => e.message)).toEqual([line('applied')]);
    appendFileSync(file, full.slice(-10));
    const events = eventsOf(file, 's');
    expect(events.map((e) => e.message)).toEqual([line('applied'), line('failed')]);
    expect(new Set(events.map((e) => e.eventId)).size).toBe(2);
  });
});

describe('the time of a log line', () => {
  it('is a structured line’s own, a runtime line’s leading time, and none for Lambda’s START and REPORT', () => {
    expect(lineTime(JSON.stringify({ timestamp: '2026-12-05T14:11:31.919Z' }))).toBe(
      Date.parse('2026-12-05T14:11:31.919Z'),
    );
    expect(lineTime(JSON.stringify({ _aws: { Timestamp: 1796479613202 } }))).toBe(1796479613202);
    expect(lineTime('2026-12-05T14:11:31.919Z\tabc\tERROR\tInvoke Error \t{}')).toBe(
      Date.parse('2026-12-05T14:11:31.919Z'),
    );
    expect(lineTime('2026-12-05T14:11:31Z abc Task timed out after 3.00 seconds')).toBe(
      Date.parse('2026-12-05T14:11:31Z'),
    );
    // These take the time of the line before them.
    expect(lineTime('START RequestId: abc Version: $LATEST')).toBeUndefined();
    expect(lineTime('REPORT RequestId: abc\tDuration: 1.00 ms')).toBeUndefined();
    expect(lineTime('2026-12-05 not a time')).toBeUndefined();
  });
});
