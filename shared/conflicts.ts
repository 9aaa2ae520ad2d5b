/**
 * Event conflicts: the same (orderId, eventId) sent again with other content. The first content
 * stands; the copy is quarantined with both contents and both batch ids, so an operator can see
 * what differs without digging through the archive.
 */
import type { EventConflict } from './claims.ts';
import { eventDigest, stableHash } from './digest.ts';
import type { IncomingMessage, Ledger, Quarantine, RawArchive } from './ingest.ts';
import { batchPartRejectId } from './keys.ts';
import type { OrderView } from './order-state.ts';
import { type OrderEvent, validateBatch } from './schema.ts';

/** What reporting a conflict needs: the first batch's ledger entry and archived body. */
export interface ConflictPorts {
  readonly ledger: Pick<Ledger, 'entry'>;
  readonly archive: Pick<RawArchive, 'getText'>;
  readonly quarantine: Quarantine;
}

/** An event's content as sent (what an operator compares in an event conflict). */
export interface EventContent extends OrderView {
  readonly eventId: string;
}

export const eventContent = (e: OrderEvent): EventContent => ({
  eventId: e.eventId,
  orderId: e.orderId,
  customerId: e.customerId,
  status: e.status,
  amount: e.amount,
  currency: e.currency,
  eventTime: e.eventTime,
});

/** Both sides of an event conflict: the first content (which stands) and the ignored one. */
export interface ConflictRecord {
  readonly orderId: string;
  readonly eventId: string;
  readonly first: {
    readonly batchId: string;
    readonly digest: string;
    /** Undefined when the first batch's archived body could not be read. */
    readonly event?: EventContent;
  };
  readonly second: {
    readonly batchId: string;
    readonly digest: string;
    readonly event: EventContent;
  };
}

/** The first content of a conflicting event, from the archived body of the batch that claimed it. */
const firstContent = async (
  conflict: EventConflict,
  ports: ConflictPorts,
): Promise<EventContent | undefined> => {
  const entry = await ports.ledger.entry(conflict.claim.batchId);
  const text = entry && (await ports.archive.getText(entry.archiveKey));
  if (text === undefined) return undefined;
  // The archive holds what was applied; if it was edited since, the report says "other content".
  const parsed = validateBatch(parseJson(text));
  if (!parsed.ok) return undefined;
  const { orderId, eventId } = conflict.event;
  const first = parsed.batch.events.find((e) => e.orderId === orderId && e.eventId === eventId);
  return first && eventContent(first);
};

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch (error) {
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
};

const FIELDS = ['customerId', 'status', 'amount', 'currency', 'eventTime'] as const;

/**
 * Quarantines one conflicting copy of an event, with both contents and both batch ids. Keyed by
 * batch and event, so a redelivery of the batch rewrites the same object.
 */
export const reportConflict = async (
  conflict: EventConflict,
  batchId: string,
  message: IncomingMessage,
  ports: ConflictPorts,
): Promise<void> => {
  const { event, claim } = conflict;
  const second = eventContent(event);
  const first = await firstContent(conflict, ports);
  const differs = first ? FIELDS.filter((f) => first[f] !== second[f]) : [];
  await ports.quarantine.put({
    source: 'ingest',
    messageId: message.messageId,
    sentAtMs: message.sentAtMs,
    reason: 'event-conflict',
    detail:
      `order ${event.orderId} event ${event.eventId} was first applied by batch ${claim.batchId}` +
      (first ? ` with another ${differs.join(', ')}` : ' with other content') +
      `; this copy in batch ${batchId} is ignored and the rest of the batch applies`,
    batchId,
    body: JSON.stringify(second),
    id: batchPartRejectId(
      batchId,
      'event-conflict',
      stableHash(`${event.orderId}\u0000${event.eventId}`).toString('hex', 0, 12),
    ),
    conflict: {
      orderId: event.orderId,
      eventId: event.eventId,
      first: { batchId: claim.batchId, digest: claim.digest, ...(first ? { event: first } : {}) },
      second: { batchId, digest: eventDigest(event), event: second },
    },
  });
};
