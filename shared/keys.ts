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

/**
 * The consumer's index of final hours, one object per day, beside the hour objects but outside
 * their key pattern (`hourOfObjectKey` never matches it, nor the Glue table's path projection).
 */
export const FINAL_INDEX_PREFIX = `${AGGREGATE_PREFIX}_final/`;
/** `2026-10-01` → `aggregates/hourly/_final/date=2026-10-01.json` */
export const dayIndexKey = (date: string) => `${FINAL_INDEX_PREFIX}date=${date}.json`;

export const RAW_PREFIX = 'raw/';
/**
 * Raw batches are filed under the hour of their earliest event: a pure function of the content,
 * so every retry targets the same key and `replay archive` can select an interval by prefix.
 */
export const rawArchiveKey = (batchId: string, earliestHour: string) =>
  `${RAW_PREFIX}date=${earliestHour.slice(0, 10)}/hour=${earliestHour.slice(11, 13)}/${encodeURIComponent(batchId)}.json`;

/**
 * The batch id a raw archive key names (the inverse of `rawArchiveKey`); undefined for a key the
 * archive's layout does not make (an object put there by hand).
 */
export const batchIdOfArchiveKey = (key: string): string | undefined => {
  const m = /^raw\/date=\d{4}-\d{2}-\d{2}\/hour=\d{2}\/([^/]+)\.json$/.exec(key);
  if (!m?.[1]) return undefined;
  try {
    return decodeURIComponent(m[1]);
  } catch (error) {
    // Not percent-encoded as `rawArchiveKey` writes it.
    if (error instanceof URIError) return undefined;
    throw error;
  }
};

/** The hour a raw archive key is filed under (its batch's earliest event); undefined otherwise. */
export const hourOfArchiveKey = (key: string): string | undefined => {
  const m = /^raw\/date=(\d{4}-\d{2}-\d{2})\/hour=(\d{2})\//.exec(key);
  return m ? `${m[1]}T${m[2]}:00:00Z` : undefined;
};

export const ARRIVAL_PREFIX = 'arrivals/';
/**
 * The arrival index: one empty marker per archived batch, filed under the UTC hour its ledger
 * claim was first made, named after its archive key. Listing the hours since a point in time
 * finds every batch received since, whatever its events' times: the restore drill's replay.
 * `2026-12-01T04:…` + `raw/date=2026-10-01/hour=09/b.json` →
 * `arrivals/date=2026-12-01/hour=04/date=2026-10-01/hour=09/b.json`
 */
export const arrivalKey = (receivedAtMs: number, archiveKey: string) => {
  const hour = new Date(receivedAtMs).toISOString();
  return `${ARRIVAL_PREFIX}date=${hour.slice(0, 10)}/hour=${hour.slice(11, 13)}/${archiveKey.slice(RAW_PREFIX.length)}`;
};
/** The listing prefix of the arrivals of one UTC hour (`2026-12-01T04:00:00Z`). */
export const arrivalHourPrefix = (hour: string) =>
  `${ARRIVAL_PREFIX}date=${hour.slice(0, 10)}/hour=${hour.slice(11, 13)}/`;
/** The archive key an arrival marker names; undefined for any other key. */
export const archiveKeyOfArrival = (key: string): string | undefined => {
  const m = /^arrivals\/date=\d{4}-\d{2}-\d{2}\/hour=\d{2}\/(.+)$/.exec(key);
  return m ? `${RAW_PREFIX}${m[1]}` : undefined;
};

export const REJECT_PREFIX = 'rejects/';
/**
 * `rejects/<source>/reason=<reason>/date=<sent date>/<id>.json`. Keyed by SQS message id (or,
 * for an event conflict, by batch and event), so a redelivered reject overwrites itself instead
 * of piling up. The reason and the day it was sent are in the key, so counting rejects by reason
 * or selecting them by reason and day takes a listing, not a read of every object.
 */
export const rejectKey = (source: string, reason: string, sentAtMs: number, id: string) =>
  `${REJECT_PREFIX}${source}/reason=${reason}/date=${new Date(sentAtMs).toISOString().slice(0, 10)}/${encodeURIComponent(id)}.json`;

/** The kinds of reject that concern one part of a batch, several per message. */
export type BatchPartRejectKind = 'event-conflict' | 'too-late';

/**
 * The id of a reject of one part of a batch (an event in conflict, a too-late hour): the batch id
 * first, so that its key names the batch; `part` holds no slash.
 */
export const batchPartRejectId = (batchId: string, kind: BatchPartRejectKind, part: string) =>
  `${batchId}/${kind}/${part}`;

/** What a reject's key tells without reading the object. */
export interface RejectKeyFields {
  readonly source: string;
  /** Absent in keys written before the reason was part of the key: read the object for it. */
  readonly reason?: string;
  /** The UTC day it was sent, `2026-10-01`. */
  readonly date: string;
  /**
   * The batch of a reject named by `batchPartRejectId`; absent for one named by its message id
   * (a body refused whole), whose batch only the object tells.
   */
  readonly batchId?: string;
}

const REJECT_KEY =
  /^rejects\/([^/]+)\/(?:reason=([^/]+)\/)?date=(\d{4}-\d{2}-\d{2})\/(?:([^/]+)\.json$)?/;
// Greedy: a batch id may hold a slash, and even a kind's name, but the part holds no slash.
const BATCH_PART_ID = /^(.+)\/(?:event-conflict|too-late)\/[^/]+$/;

const decodedId = (encoded: string): string | undefined => {
  try {
    return decodeURIComponent(encoded);
  } catch {
    // Not written by `rejectKey` (which encodes every id): nothing can be read from it.
    return undefined;
  }
};

/** The fields of a reject key; undefined for a key the quarantine did not write. */
export const rejectKeyFields = (key: string): RejectKeyFields | undefined => {
  const m = REJECT_KEY.exec(key);
  if (!m?.[1] || !m[3]) return undefined;
  const batchId = BATCH_PART_ID.exec(decodedId(m[4] ?? '') ?? '')?.[1];
  return {
    source: m[1],
    ...(m[2] ? { reason: m[2] } : {}),
    date: m[3],
    ...(batchId === undefined ? {} : { batchId }),
  };
};
