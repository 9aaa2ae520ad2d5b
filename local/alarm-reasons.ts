/**
 * An alarm's state reason and reason data in CloudWatch's own words and shapes, so that what
 * reads them on AWS (a notification forwarder parsing `NewStateReason`, a runbook's regex over
 * `StateReasonData`) reads the local runtime's too:
 *
 *   Threshold Crossed: 1 datapoint [2.0 (07/12/26 19:15:00)] was greater than or equal to the
 *   threshold (1.0).
 */

/** A number as CloudWatch's Java service writes it: `2.0`, `0.25`, `1.0E7`. */
export const javaNumber = (n: number): string => {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'NaN' : n > 0 ? 'Infinity' : '-Infinity';
  const abs = Math.abs(n);
  if (abs !== 0 && (abs >= 1e7 || abs < 1e-3)) {
    const [mantissa = '', exponent = ''] = n.toExponential().split('e');
    return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${exponent.replace('+', '')}`;
  }
  return Number.isInteger(n) ? `${n}.0` : String(n);
};

const two = (n: number) => String(n).padStart(2, '0');

/** A datapoint's time in a state reason: `dd/MM/yy HH:mm:ss`, UTC. */
export const reasonTime = (ms: number): string => {
  const d = new Date(ms);
  return `${two(d.getUTCDate())}/${two(d.getUTCMonth() + 1)}/${two(d.getUTCFullYear() % 100)} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
};

/** A time in reason data and notifications: `2026-12-07T19:15:00.000+0000`. */
export const cloudWatchTime = (ms: number): string =>
  new Date(ms).toISOString().replace('Z', '+0000');

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
const wasWere = (n: number) => (n === 1 ? 'was' : 'were');

/** How CloudWatch names a `TreatMissingData` setting in a reason. */
const MISSING_TREATED = { breaching: 'Breaching', notBreaching: 'NonBreaching' } as const;

/** The reason when no evaluated period had data. */
export const noDataReason = (
  periods: number,
  treatMissingData: 'breaching' | 'notBreaching' | 'ignore' | 'missing',
): string => {
  if (treatMissingData === 'missing')
    return `Insufficient Data: ${count(periods, 'datapoint')} ${wasWere(periods)} unknown.`;
  const none = `Threshold Crossed: no datapoints were received for ${count(periods, 'period')}`;
  if (treatMissingData === 'ignore') return `${none}.`;
  return `${none} and ${count(periods, 'missing datapoint')} ${wasWere(periods)} treated as [${MISSING_TREATED[treatMissingData]}].`;
};

export interface ReasonPoint {
  /** The start of the datapoint's period. */
  readonly atMs: number;
  readonly value: number;
}

/**
 * The reason for a state reached on data. CloudWatch words it two ways: an alarm with
 * `DatapointsToAlarm` (M out of N) names the periods that decided the state out of the last N
 * and the least number of such periods the transition needs; one without it (N out of N) lists
 * the datapoints that decided it:
 *
 *   Threshold Crossed: 2 datapoints [0.0 (09/01/23 14:02:00), 1.0 (09/01/23 14:01:00)] were not
 *   greater than the threshold (42.0).
 */
export const thresholdReason = (o: {
  readonly state: 'ALARM' | 'OK';
  /** The periods that breach (ALARM) or do not (OK), missing ones counted as treated. */
  readonly deciding: number;
  readonly periods: number;
  /** The deciding periods' datapoints, newest first. */
  readonly points: readonly ReasonPoint[];
  /** `greater than or equal to` … */
  readonly comparison: string;
  readonly threshold: number;
  /** `DatapointsToAlarm`, when the alarm sets it. */
  readonly datapointsToAlarm: number | undefined;
}): string => {
  const shown = o.points.map((p) => `${javaNumber(p.value)} (${reasonTime(p.atMs)})`).join(', ');
  const compared = `${o.state === 'OK' ? 'not ' : ''}${o.comparison} the threshold (${javaNumber(o.threshold)})`;
  if (o.datapointsToAlarm === undefined)
    return `Threshold Crossed: ${count(o.points.length, 'datapoint')} [${shown}] ${wasWere(o.points.length)} ${compared}.`;
  // Leaving ALARM takes enough periods not breaching that fewer than M can still breach.
  const minimum = o.state === 'ALARM' ? o.datapointsToAlarm : o.periods - o.datapointsToAlarm + 1;
  const transition = o.state === 'ALARM' ? 'OK -> ALARM' : 'ALARM -> OK';
  return `Threshold Crossed: ${o.deciding} out of the last ${o.periods} datapoints [${shown}] ${wasWere(o.deciding)} ${compared} (minimum ${count(minimum, 'datapoint')} for ${transition} transition).`;
};
