/** Reading the functions' log lines: what `onceflow logs` and the edge's CloudWatch Logs share. */

/**
 * A log line's time: Powertools' `timestamp`, or an EMF line's `_aws.Timestamp`; undefined for
 * other lines (they take the time of the line before them).
 */
export const lineTime = (line: string): number | undefined => {
  if (!line.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(line) as { timestamp?: unknown; _aws?: { Timestamp?: unknown } };
    if (typeof parsed.timestamp === 'string') return Date.parse(parsed.timestamp);
    return typeof parsed._aws?.Timestamp === 'number' ? parsed._aws.Timestamp : undefined;
  } catch {
    return undefined;
  }
};
