import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseBoundary, parseInstant, parseInterval } from '../../cli/commands/interval.ts';
import { sinceMs as logsSinceMs } from '../../cli/commands/logs.ts';
import { CliError } from '../../cli/target.ts';
import { formatHour } from '../../shared/time.ts';

const HOUR = Date.UTC(2026, 9, 1, 9);

describe('interval boundaries', () => {
  it('reads a date as its midnight UTC and a whole hour with or without its seconds', () => {
    expect(parseBoundary('--from', '2026-10-01')).toBe(Date.UTC(2026, 9, 1));
    for (const text of [
      '2026-10-01T09:00:00Z',
      '2026-10-01T09:00:00.000Z',
      '2026-10-01T09:00Z',
      '2026-10-01t09:00z',
      '2026-10-01T11:00+02:00',
      '2026-10-01T04:00-05:00',
      '2026-10-01T11:00:00+02:00',
    ]) {
      expect(parseBoundary('--from', text), text).toBe(HOUR);
    }
  });

  it('names the flag and the accepted forms when a boundary is not a whole hour or not a time', () => {
    for (const text of [
      '2026-10-01T09:30Z',
      '2026-10-01T09:00:01Z',
      '2026-10-01T09Z',
      '2026-10-01T09:00',
      '2026-10-01 09:00Z',
      '2026-10-01T09:00+2:00',
      '2026-13-01',
      'yesterday',
      '',
    ]) {
      expect(() => parseBoundary('--to', text), text).toThrow(CliError);
      expect(() => parseBoundary('--to', text), text).toThrow(
        `--to ${text}: give a date (2026-10-01) or a whole UTC hour (2026-10-01T09:00:00Z)`,
      );
    }
  });

  it('reads every whole hour back from its short and its full spelling', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 24 * 365 * 200 }), (n) => {
        const ms = Date.UTC(1970, 0, 1) + n * 3_600_000;
        const full = formatHour(ms);
        expect(parseBoundary('--from', full)).toBe(ms);
        expect(parseBoundary('--from', full.replace(':00:00Z', ':00Z'))).toBe(ms);
      }),
    );
  });

  it('takes both boundaries or neither, the first before the second', () => {
    expect(parseInterval(undefined, undefined, false)).toBeUndefined();
    expect(() => parseInterval(undefined, undefined, true)).toThrow('give both --from and --to');
    expect(() => parseInterval('2026-10-01', undefined, false)).toThrow('give both');
    expect(parseInterval('2026-10-01T09:00Z', '2026-10-01T10:00Z', true)).toEqual({
      fromMs: HOUR,
      toMs: HOUR + 3_600_000,
    });
    expect(() => parseInterval('2026-10-01T10:00Z', '2026-10-01T10:00:00Z', true)).toThrow(
      '--from 2026-10-01T10:00Z must be before --to 2026-10-01T10:00:00Z',
    );
  });
});

describe('rejects --since and replay rejects --since', () => {
  it('takes any minute or instant, its seconds optional, and names anything else', () => {
    expect(parseInstant('--since', '2026-10-01')).toBe(Date.UTC(2026, 9, 1));
    expect(parseInstant('--since', '2026-10-01T09:30Z')).toBe(HOUR + 30 * 60_000);
    expect(parseInstant('--since', '2026-10-01T11:30+02:00')).toBe(HOUR + 30 * 60_000);
    expect(parseInstant('--since', '2026-10-01T09:30:15.250Z')).toBe(HOUR + 30 * 60_000 + 15_250);
    expect(() => parseInstant('--since', '2026-10-01T09')).toThrow(
      '--since 2026-10-01T09: give a date (2026-10-01) or an RFC 3339 time',
    );
  });
});

describe('instants named by flags (replay --received-from, drill restore --at, logs --since)', () => {
  it('takes a date or an RFC 3339 time with an offset, its seconds optional', () => {
    expect(parseInstant('--at', '2026-10-01')).toBe(Date.UTC(2026, 9, 1));
    expect(parseInstant('--at', '2026-10-01T09:30Z')).toBe(HOUR + 30 * 60_000);
    expect(parseInstant('--at', '2026-10-01T09:30:00.5-01:00')).toBe(HOUR + 90 * 60_000 + 500);
  });

  it('refuses a time without an offset, which would read differently in every time zone', () => {
    for (const text of ['2026-10-01T09:30', '2026-10-01T09:30:00', 'Oct 1 2026', '1759311000000']) {
      expect(() => parseInstant('--received-from', text), text).toThrow(
        `--received-from ${text}: give a date (2026-10-01) or an RFC 3339 time (2026-10-01T09:30Z)`,
      );
    }
  });

  it('reads logs --since as a duration back from now or an instant, and names the three forms', () => {
    const now = HOUR + 3_600_000;
    expect(logsSinceMs('10m', now)).toBe(now - 600_000);
    expect(logsSinceMs('1d', now)).toBe(now - 86_400_000);
    expect(logsSinceMs('2026-10-01T09:30Z', now)).toBe(HOUR + 30 * 60_000);
    expect(() => logsSinceMs('2026-10-01T09:30', now)).toThrow(
      '--since 2026-10-01T09:30: give a duration (30s, 10m, 2h, 1d), a date (2026-10-01) or an RFC 3339 time (2026-10-01T09:30Z)',
    );
  });
});
