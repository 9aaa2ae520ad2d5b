/** Reading the functions' log lines: what `onceflow logs` and the edge's CloudWatch Logs share. */
import * as v from 'valibot';

/** What gives a line its time: Powertools' `timestamp`, an EMF line's `_aws.Timestamp`. */
const TimedLineSchema = v.object({
  timestamp: v.optional(v.string()),
  _aws: v.optional(v.object({ Timestamp: v.optional(v.number()) })),
});

/**
 * A log line's time: Powertools' `timestamp`, or an EMF line's `_aws.Timestamp`; undefined for
 * other lines (they take the time of the line before them).
 */
export const lineTime = (line: string): number | undefined => {
  if (!line.startsWith('{')) return undefined;
  try {
    const parsed = v.safeParse(TimedLineSchema, JSON.parse(line));
    if (!parsed.success) return undefined;
    const { timestamp, _aws } = parsed.output;
    return timestamp === undefined ? _aws?.Timestamp : Date.parse(timestamp);
  } catch {
    return undefined;
  }
};
