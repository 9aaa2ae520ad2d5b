/**
 * Reading the quarantine back (`onceflow rejects`, `status`, `replay rejects`, the chaos judge,
 * the tests) through one schema, beside the writer (`S3Store.put`). Keys first: `rejectKey` names
 * each reject's reason and the day it was sent, so counting and selecting take listings, and only
 * the objects that match are read. Content under rejects/ is input too: a foreign object is named.
 */
import * as v from 'valibot';
import { mapLimit } from '../shared/concurrency.ts';
import { UnexpectedObjectError } from '../shared/errors.ts';
import { REJECT_PREFIX, rejectKeyFields } from '../shared/keys.ts';
import { describeValidationIssues } from '../shared/schema.ts';
import { READS_IN_FLIGHT, type S3Store } from './s3.ts';

/** A reject object as `put` writes it; S3 content is input too, so readers validate it. */
export const RejectObjectSchema = v.object({
  source: v.string(),
  sentAt: v.string(),
  reason: v.string(),
  detail: v.string(),
  messageId: v.string(),
  batchId: v.optional(v.string()),
  body: v.string(),
  /** Event conflicts: both contents and both batch ids. */
  conflict: v.optional(
    v.object({
      orderId: v.string(),
      eventId: v.string(),
      first: v.object({
        batchId: v.string(),
        digest: v.string(),
        event: v.optional(v.record(v.string(), v.string())),
      }),
      second: v.object({
        batchId: v.string(),
        digest: v.string(),
        event: v.record(v.string(), v.string()),
      }),
    }),
  ),
});

/** A quarantined message as stored, with the key of its object. */
export type StoredReject = v.InferOutput<typeof RejectObjectSchema> & { readonly key: string };

/** Which rejects to read: one reason, and those sent at or after an instant. */
export interface RejectFilter {
  readonly reason?: string;
  readonly sinceMs?: number;
  /** Only the rejects naming this batch id (each selected object is read to know). */
  readonly batchId?: string;
}

/** A reject object's text, validated; throws naming the key when it is not one. */
export const parseRejectObject = (key: string, text: string): StoredReject => {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UnexpectedObjectError(key, 'is not JSON', { cause: error });
  }
  const result = v.safeParse(RejectObjectSchema, json);
  if (!result.success)
    throw new UnexpectedObjectError(
      key,
      `is not a reject record: ${describeValidationIssues(result.issues)}`,
    );
  return { key, ...result.output };
};

/**
 * The keys a filter may select. With a reason, only that reason's prefix in each source is
 * listed, from the day asked for on (a quarantine's other reasons and earlier days are not even
 * listed), plus the keys without a reason in them, which are read to decide. Without one, every
 * key, so that an object the quarantine did not write is read and named.
 */
const rejectKeys = async (store: S3Store, { reason, sinceMs }: RejectFilter): Promise<string[]> => {
  const sinceDate =
    sinceMs === undefined ? undefined : new Date(sinceMs).toISOString().slice(0, 10);
  if (reason === undefined) {
    const keys = await store.listKeys(REJECT_PREFIX);
    return keys.filter((key) => {
      const date = rejectKeyFields(key)?.date;
      return sinceDate === undefined || date === undefined || date >= sinceDate;
    });
  }
  // Per source: its keys of this reason, and its keys written before the reason was in the key
  // (`<source>/date=…`), each from the day asked for on.
  const sources = await store.subfolders(REJECT_PREFIX);
  const listed = await Promise.all(
    sources
      .flatMap((source) => [`${source}reason=${reason}/`, source])
      .map((folder) =>
        store.listKeys(
          `${folder}date=`,
          sinceDate === undefined ? undefined : `${folder}date=${sinceDate}`,
        ),
      ),
  );
  return listed.flat();
};

/**
 * The reject objects, validated, in the order they were sent: all of them, or those of a reason,
 * sent at or after an instant, or naming a batch.
 */
export const readRejects = async (
  store: S3Store,
  filter: RejectFilter = {},
): Promise<StoredReject[]> => {
  const { reason, sinceMs, batchId } = filter;
  // A key naming another batch is not read; one naming none (a body refused whole) is.
  const keys = (await rejectKeys(store, filter)).filter((key) => {
    const named = rejectKeyFields(key)?.batchId;
    return batchId === undefined || named === undefined || named === batchId;
  });
  const rejects = await mapLimit(keys, READS_IN_FLIGHT, async (key) =>
    parseRejectObject(key, (await store.getText(key)) ?? ''),
  );
  return rejects
    .filter(
      (r) =>
        (reason === undefined || r.reason === reason) &&
        (sinceMs === undefined || Date.parse(r.sentAt) >= sinceMs) &&
        (batchId === undefined || r.batchId === batchId),
    )
    .sort((a, b) => a.sentAt.localeCompare(b.sentAt) || a.key.localeCompare(b.key));
};

/** How many rejects of each reason, from their keys: an object is read only if its key lacks it. */
export const countRejectsByReason = async (store: S3Store): Promise<Record<string, number>> => {
  const keys = await store.listKeys(REJECT_PREFIX);
  const reasons = await mapLimit(
    keys,
    READS_IN_FLIGHT,
    async (key) =>
      rejectKeyFields(key)?.reason ??
      parseRejectObject(key, (await store.getText(key)) ?? '').reason,
  );
  const counts: Record<string, number> = {};
  for (const reason of reasons) counts[reason] = (counts[reason] ?? 0) + 1;
  return counts;
};
