/**
 * What became of a batch and of each of its events, read back from the ledger entry and the
 * claims (`onceflow batch`): the operator's answer, after an incident or a replay, to "was it
 * applied, and was each event counted once, and by which batch?". Pure.
 */
import type { EventClaim } from './claims.ts';
import { eventDigest } from './digest.ts';
import type { LedgerEntry } from './ingest.ts';
import type { OrderEvent } from './schema.ts';

/**
 * - `counted`: claimed by this batch, so it took part in newest-wins and its hour counts it;
 * - `duplicate`: the same content claimed first by another batch (`claimedBy`), which counts it;
 * - `conflict`: other content under the same order and event id claimed first by `claimedBy`:
 *   never applied from this batch, reported (`event-conflict` in rejects/);
 * - `too-late`: its hour was closed when the batch arrived under latePolicy quarantine, so it was
 *   refused (`too-late` in rejects/); `claimedBy` names the batch that counts it since, if any
 *   (`replay rejects` re-sends it under a `late-…` id);
 * - `unclaimed`: no claim: the batch has not applied it yet (pending), or the claim was removed
 *   once the claiming batch's ledger entry expired.
 */
export type EventFate = 'counted' | 'duplicate' | 'conflict' | 'too-late' | 'unclaimed';

export const EVENT_FATES: readonly EventFate[] = [
  'counted',
  'duplicate',
  'conflict',
  'too-late',
  'unclaimed',
];

export interface EventReport {
  readonly orderId: string;
  readonly eventId: string;
  readonly eventTime: string;
  readonly fate: EventFate;
  /** The batch whose claim decided the fate, when it is another batch. */
  readonly claimedBy?: string;
}

/** `applied`: every part committed; `pending`: claimed, some part not committed yet. */
export type BatchState = 'applied' | 'pending';

export const batchState = (entry: LedgerEntry): BatchState =>
  entry.doneParts.size >= entry.parts ? 'applied' : 'pending';

/** Reads the claim on one event of one order, as stored now. */
export type ClaimReader = (orderId: string, eventId: string) => EventClaim | undefined;

/** Each event's fate, in the batch's order. */
export const eventFates = (
  batchId: string,
  events: readonly OrderEvent[],
  claimOf: ClaimReader,
  lateHours: ReadonlySet<string> | undefined,
): EventReport[] =>
  events.map((event) => {
    const claim = claimOf(event.orderId, event.eventId);
    const base = {
      orderId: event.orderId,
      eventId: event.eventId,
      eventTime: event.eventTime,
    };
    const other = claim && claim.batchId !== batchId ? { claimedBy: claim.batchId } : {};
    // Refused before any claim was tried: whoever claimed it since did so on a later send.
    if (lateHours?.has(event.hour)) return { ...base, fate: 'too-late', ...other };
    if (!claim) return { ...base, fate: 'unclaimed' };
    if (claim.digest !== eventDigest(event)) return { ...base, fate: 'conflict', ...other };
    return { ...base, fate: claim.batchId === batchId ? 'counted' : 'duplicate', ...other };
  });

/** How many events had each fate, every fate present (zero included), in EVENT_FATES order. */
export const fateCounts = (reports: readonly EventReport[]): Record<EventFate, number> => {
  const counts: Record<EventFate, number> = {
    counted: 0,
    duplicate: 0,
    conflict: 0,
    'too-late': 0,
    unclaimed: 0,
  };
  for (const r of reports) counts[r.fate] += 1;
  return counts;
};
