/**
 * Instants and intervals of whole UTC hours, as flags name them. Parsing only: `generate` needs
 * no AWS client, and loads none through this file.
 */
import { parseEventTime } from '../../shared/time.ts';
import { CliError } from '../target.ts';

/**
 * A date is its midnight UTC; a time may leave out its seconds (`2026-10-01T09:00Z`), as people
 * type an hour, though an event time may not.
 */
const epochMsOf = (text: string): number | undefined =>
  parseEventTime(
    /^\d{4}-\d{2}-\d{2}$/.test(text)
      ? `${text}T00:00:00Z`
      : text.replace(/^(\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2})(?=[Zz]$|[+-]\d{2}:\d{2}$)/, '$1:00'),
  )?.epochMs;

/**
 * An instant a flag names: a date (its midnight UTC) or an RFC 3339 time, its seconds optional,
 * always with an offset (a time without one would mean the operator's zone on one machine and
 * UTC on another).
 */
export const parseInstant = (
  flag: string,
  text: string,
  /** What else the flag takes, named first in the error (`a duration (30s, 10m)`). */
  alternatives?: string,
): number => {
  const ms = epochMsOf(text);
  if (ms === undefined) {
    const also = alternatives ? `${alternatives}, ` : '';
    throw new CliError(
      `${flag} ${text}: give ${also}a date (2026-10-01) or an RFC 3339 time (2026-10-01T09:30Z)`,
    );
  }
  return ms;
};

export const parseBoundary = (flag: string, text: string): number => {
  const ms = epochMsOf(text);
  if (ms === undefined || ms % 3_600_000 !== 0) {
    throw new CliError(
      `${flag} ${text}: give a date (2026-10-01) or a whole UTC hour (2026-10-01T09:00:00Z)`,
    );
  }
  return ms;
};

export interface Interval {
  readonly fromMs: number;
  readonly toMs: number;
}

export const parseInterval = (
  from: string | undefined,
  to: string | undefined,
  required: boolean,
): Interval | undefined => {
  if (from === undefined && to === undefined && !required) return undefined;
  if (from === undefined || to === undefined) throw new CliError('give both --from and --to');
  const interval = { fromMs: parseBoundary('--from', from), toMs: parseBoundary('--to', to) };
  if (interval.fromMs >= interval.toMs)
    throw new CliError(`--from ${from} must be before --to ${to}`);
  return interval;
};
