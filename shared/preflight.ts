/**
 * What the pipeline would do with each body of a stream, decided from the bodies alone, before
 * any is sent: the contract's checks, exactly as ingest runs them, and how the stream's own
 * bodies meet (a batch or an event sent twice, or an id reused with other content). Taken in the
 * stream's order, as if each arrived after the one before; of the stack, only the batch ids its
 * ledger holds when the caller reads them (`known`): not the events earlier batches claimed, the
 * hours already closed, nor the ledger's retention.
 */
import { batchDigest, eventDigest } from './digest.ts';
import { InvalidMessageError, type RejectReason } from './errors.ts';
import { parseBatchBody } from './schema.ts';

/** The same (order, event) as an earlier body's, with other content: one of the two is refused. */
export interface PreflightEventConflict {
  readonly orderId: string;
  readonly eventId: string;
  /** The body (0-based) that carried it first. */
  readonly first: number;
}

export type PreflightVerdict =
  /** Applied: its events counted, but for those an earlier body already carried. */
  | {
      readonly kind: 'applies';
      readonly batchId: string;
      readonly events: number;
      /** Events an earlier body carried with the same content: counted once, there. */
      readonly repeatedEvents: number;
      readonly conflicts: readonly PreflightEventConflict[];
      /** The UTC hours its events fall in, sorted. */
      readonly hours: readonly string[];
    }
  /**
   * The same batch as an earlier body (the same id and content), or as one the stack's ledger
   * holds (`first: 'stack'`): applied once.
   */
  | { readonly kind: 'repeat'; readonly batchId: string; readonly first: number | 'stack' }
  /**
   * An earlier body's batch id with other content: whichever arrives second is refused; the id of
   * a batch the stack's ledger holds with other content (`first: 'stack'`): refused.
   */
  | {
      readonly kind: 'batch-conflict';
      readonly batchId: string;
      readonly first: number | 'stack';
    }
  /** Refused whole by the contract's checks, with the reason its reject would give. */
  | {
      readonly kind: 'refused';
      readonly reason: RejectReason;
      readonly detail: string;
      readonly batchId?: string;
    };

export interface PreflightOptions {
  /** The batches the stack's ledger holds, by id: the digest of the content each was claimed with. */
  readonly known?: ReadonlyMap<string, string>;
}

/** Each body's verdict, in the stream's order. */
export const preflight = (
  bodies: readonly string[],
  maxBodyBytes: number,
  options: PreflightOptions = {},
): PreflightVerdict[] => {
  const batches = new Map<string, { readonly digest: string; readonly first: number | 'stack' }>();
  for (const [id, digest] of options.known ?? []) batches.set(id, { digest, first: 'stack' });
  const events = new Map<string, { readonly digest: string; readonly first: number }>();
  return bodies.map((body, index): PreflightVerdict => {
    let batch: ReturnType<typeof parseBatchBody>;
    try {
      batch = parseBatchBody(body, maxBodyBytes);
    } catch (error) {
      if (!(error instanceof InvalidMessageError)) throw error;
      // Refused whole, it claims nothing: its batch id stays free for a corrected body.
      return {
        kind: 'refused',
        reason: error.reason,
        detail: error.detail,
        ...(error.namedBatchId === undefined ? {} : { batchId: error.namedBatchId }),
      };
    }
    const digest = batchDigest(batch);
    const earlier = batches.get(batch.batchId);
    if (earlier)
      return {
        kind: earlier.digest === digest ? 'repeat' : 'batch-conflict',
        batchId: batch.batchId,
        first: earlier.first,
      };
    batches.set(batch.batchId, { digest, first: index });
    let repeatedEvents = 0;
    const conflicts: PreflightEventConflict[] = [];
    for (const event of batch.events) {
      // Claims are per (order, event): JSON's array keeps the two ids apart, whatever they hold.
      const key = JSON.stringify([event.orderId, event.eventId]);
      const claim = events.get(key);
      const content = eventDigest(event);
      if (!claim) events.set(key, { digest: content, first: index });
      else if (claim.digest === content) repeatedEvents++;
      else conflicts.push({ orderId: event.orderId, eventId: event.eventId, first: claim.first });
    }
    return {
      kind: 'applies',
      batchId: batch.batchId,
      events: batch.events.length - repeatedEvents - conflicts.length,
      repeatedEvents,
      conflicts,
      hours: [...new Set(batch.events.map((e) => e.hour))].sort(),
    };
  });
};
