import { createHash } from 'node:crypto';
import type { OrderBatch, OrderEvent } from './schema.ts';

/**
 * The digest of a batch's meaning, not its bytes: events sorted by id, amounts in minor units,
 * times as UTC instants. A producer that re-serialises the same batch differently still
 * matches; any change in what would be applied does not.
 */
export const batchDigest = (batch: OrderBatch): string => {
  const events = [...batch.events]
    .sort((a, b) => (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0))
    .map((e) => [
      e.eventId,
      e.orderId,
      e.customerId,
      e.status,
      e.amountMinor.toString(),
      e.currency,
      e.instant,
    ]);
  const canonical = JSON.stringify([batch.batchId, batch.source ?? null, events]);
  return createHash('sha256').update(canonical).digest('hex');
};

/** A stable, uniform small integer for a string: shard choice, request tokens. */
export const stableHash = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * The digest of one event's meaning (96 bits, 16 characters): what tells a re-sent copy of an
 * event from a conflicting one. Like the batch digest, amounts count in minor units and times
 * as UTC instants, so `"25.5"` and `"25.50"` are the same content.
 */
export const eventDigest = (e: OrderEvent): string =>
  createHash('sha256')
    .update(
      JSON.stringify([
        e.orderId,
        e.eventId,
        e.customerId,
        e.status,
        e.amountMinor.toString(),
        e.currency,
        e.instant,
      ]),
    )
    .digest('base64url')
    .slice(0, 16);
