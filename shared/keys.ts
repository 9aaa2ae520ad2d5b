/**
 * Where each S3 object lives, in one place. (The DynamoDB item layout belongs to the adapter:
 * `adapters/dynamo.ts`.)
 */

export const AGGREGATE_PREFIX = 'aggregates/hourly/';
/** `2026-10-01T09:00:00Z` → `aggregates/hourly/date=2026-10-01/hour=09.json` */
export const hourObjectKey = (hour: string) =>
  `${AGGREGATE_PREFIX}date=${hour.slice(0, 10)}/hour=${hour.slice(11, 13)}.json`;
const HOUR_OBJECT_KEY = /^aggregates\/hourly\/date=(\d{4}-\d{2}-\d{2})\/hour=(\d{2})\.json$/;
/** The inverse of hourObjectKey; undefined for any other key. */
export const hourOfObjectKey = (key: string): string | undefined => {
  const m = HOUR_OBJECT_KEY.exec(key);
  return m ? `${m[1]}T${m[2]}:00:00Z` : undefined;
};

export const RAW_PREFIX = 'raw/';
/**
 * Raw batches are filed under the hour of their earliest event: a pure function of the content,
 * so every retry targets the same key and `replay archive` can select an interval by prefix.
 */
export const rawArchiveKey = (batchId: string, earliestHour: string) =>
  `${RAW_PREFIX}date=${earliestHour.slice(0, 10)}/hour=${earliestHour.slice(11, 13)}/${encodeURIComponent(batchId)}.json`;

export const REJECT_PREFIX = 'rejects/';
/**
 * Keyed by SQS message id (or, for an event conflict, by batch and event), so a redelivered
 * reject overwrites itself instead of piling up.
 */
export const rejectKey = (source: string, sentAtMs: number, id: string) =>
  `${REJECT_PREFIX}${source}/date=${new Date(sentAtMs).toISOString().slice(0, 10)}/${encodeURIComponent(id)}.json`;
