/**
 * Event time handling. Instants are compared as canonical UTC strings with nine fraction digits,
 * so ordering is plain string ordering (in code and in DynamoDB conditions) and nanosecond
 * precision in the input is kept rather than rounded to milliseconds.
 */

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

export const MS_PER_HOUR = 3_600_000;

export interface Instant {
  /** `2026-10-01T09:30:00.000000000Z`: sortable, exact. */
  readonly canonical: string;
  /** Milliseconds since the epoch (sub-millisecond digits dropped). */
  readonly epochMs: number;
}

const pad = (n: number, width = 2) => n.toString().padStart(width, '0');

/** A parsed event time, or why the text is not one (worded for a reject's detail). */
export type EventTimeResult =
  | { readonly ok: true; readonly instant: Instant }
  | { readonly ok: false; readonly problem: string };

const FORMAT =
  'must be an RFC 3339 timestamp with an offset (Z or ±hh:mm), such as 2026-10-01T09:30:00Z';
const RANGE = 'must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999999Z (UTC)';

/**
 * Reads an RFC 3339 timestamp with a mandatory offset, over the whole range RFC 3339 allows
 * from year 0001 (JavaScript's Date.UTC would read years 0–99 as 1900–1999: not used here).
 * A leap second (`23:59:60` UTC, on the last day of a month) is ordered as the last instant of
 * its minute, `23:59:59.999999999Z`: after every other event of that minute, before the next.
 */
export const readEventTime = (text: string): EventTimeResult => {
  const m = RFC3339.exec(text);
  if (!m) return { ok: false, problem: FORMAT };
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 60) {
    return { ok: false, problem: `${FORMAT}; month, hour, minute or second is out of range` };
  }
  const leap = second === 60;
  const fraction = leap ? '999999999' : (m[7] ?? '').padEnd(9, '0');
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day);
  local.setUTCHours(hour, minute, leap ? 59 : second, 0);
  // setUTCFullYear rolls 2026-02-30 over to March: a round trip detects impossible dates.
  if (local.getUTCDate() !== day || local.getUTCMonth() !== month - 1) {
    return { ok: false, problem: `${FORMAT}; ${m[1]}-${m[2]}-${m[3]} is not a calendar date` };
  }
  let offsetMs = 0;
  if (!m[8]) {
    const offH = Number(m[10]);
    const offM = Number(m[11]);
    if (offH > 23 || offM > 59)
      return { ok: false, problem: `${FORMAT}; the offset is out of range` };
    offsetMs = (offH * 60 + offM) * 60_000 * (m[9] === '-' ? -1 : 1);
  }
  const utc = new Date(local.getTime() - offsetMs);
  if (leap) {
    const nextDay = new Date(utc.getTime() + 1000);
    if (utc.getUTCHours() !== 23 || utc.getUTCMinutes() !== 59 || nextDay.getUTCDate() !== 1) {
      return {
        ok: false,
        problem: `${FORMAT}; second 60 (a leap second) only exists at 23:59 UTC on the last day of a month`,
      };
    }
  }
  const y = utc.getUTCFullYear();
  if (y < 1 || y > 9999) return { ok: false, problem: RANGE };
  const canonical = `${pad(y, 4)}-${pad(utc.getUTCMonth() + 1)}-${pad(utc.getUTCDate())}T${pad(
    utc.getUTCHours(),
  )}:${pad(utc.getUTCMinutes())}:${pad(utc.getUTCSeconds())}.${fraction}Z`;
  return {
    ok: true,
    instant: { canonical, epochMs: utc.getTime() + Number(fraction.slice(0, 3)) },
  };
};

/** Parses an RFC 3339 timestamp with a mandatory offset; returns undefined when it is not one. */
export const parseEventTime = (text: string): Instant | undefined => {
  const result = readEventTime(text);
  return result.ok ? result.instant : undefined;
};

/** The UTC hour an instant falls in, as `2026-10-01T09:00:00Z`. */
export const hourOf = (instant: Instant): string => `${instant.canonical.slice(0, 13)}:00:00Z`;

/** `2026-10-01T09:00:00Z` → epoch milliseconds; undefined unless it is a whole UTC hour in that form. */
export const parseHour = (hour: string): number | undefined => {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:00:00Z$/.test(hour)) return undefined;
  const ms = Date.parse(hour);
  return Number.isNaN(ms) || formatHour(ms) !== hour ? undefined : ms;
};

/** Epoch milliseconds → the hour containing it, as `2026-10-01T09:00:00Z`. */
export const formatHour = (epochMs: number): string =>
  `${new Date(Math.floor(epochMs / MS_PER_HOUR) * MS_PER_HOUR).toISOString().slice(0, 13)}:00:00Z`;

/** Every hour in the half-open interval [from, to), both given as hour strings or instants. */
export const hoursBetween = (fromMs: number, toMs: number): string[] => {
  const hours: string[] = [];
  const first = Math.ceil(fromMs / MS_PER_HOUR) * MS_PER_HOUR;
  for (let t = first; t < toMs; t += MS_PER_HOUR) hours.push(formatHour(t));
  return hours;
};
