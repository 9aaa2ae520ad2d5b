import { createHash } from 'node:crypto';
import type { OrderBatch } from './schema.ts';

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
