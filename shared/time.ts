/**
 * Event time handling. Instants are compared as canonical UTC strings with nine fraction digits,
 * so ordering is plain string ordering (in code and in DynamoDB conditions) and nanosecond
 * precision in the input is kept rather than rounded to milliseconds.
 */

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const MS_PER_HOUR = 3_600_000;

export interface Instant {
  /** `2026-10-01T09:30:00.000000000Z`: sortable, exact. */
  readonly canonical: string;
  /** Milliseconds since the epoch (sub-millisecond digits dropped). */
  readonly epochMs: number;
}

const pad = (n: number, width = 2) => n.toString().padStart(width, '0');

/** Parses an RFC 3339 timestamp with a mandatory offset; returns undefined when it is not one. */
export const parseEventTime = (text: string): Instant | undefined => {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fraction = (m[7] ?? '').padEnd(9, '0');
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  const local = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(local);
  // Date.UTC rolls 2026-02-30 over to March: a round trip detects impossible dates.
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return undefined;
  if (year < 1 || check.getUTCFullYear() !== year) return undefined;
  let offsetMs = 0;
  if (!m[8]) {
    const offH = Number(m[10]);
    const offM = Number(m[11]);
    if (offH > 23 || offM > 59) return undefined;
    offsetMs = (offH * 60 + offM) * 60_000 * (m[9] === '-' ? -1 : 1);
  }
  const utc = new Date(local - offsetMs);
  const y = utc.getUTCFullYear();
  if (y < 1 || y > 9999) return undefined;
  const canonical = `${pad(y, 4)}-${pad(utc.getUTCMonth() + 1)}-${pad(utc.getUTCDate())}T${pad(
    utc.getUTCHours(),
  )}:${pad(utc.getUTCMinutes())}:${pad(utc.getUTCSeconds())}.${fraction}Z`;
  return { canonical, epochMs: utc.getTime() + Number(fraction.slice(0, 3)) };
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
