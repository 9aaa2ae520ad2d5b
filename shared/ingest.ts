/**
 * Applying one order batch exactly once. Pure orchestration over small ports, so it can be
 * reasoned about (and tested) without AWS:
 *
 *   validate → claim ledger → archive raw → newest-wins order writes → commit (per part) → notify
 *
 * Every step before the commit converges when repeated, the commit happens once per batch part,
 * and every step after it is idempotent: a crash anywhere followed by a redelivery ends in the
 * same state. The claim stores the digest first, so a reused batch id with other content is
 * stopped before it touches anything.
 */
import { type CounterDelta, counterDeltas } from './aggregate.ts';
import { mapLimit } from './concurrency.ts';
import { batchDigest, stableHash } from './digest.ts';
import { BatchConflictError, InvalidMessageError, type RejectReason } from './errors.ts';
import { rawArchiveKey } from './keys.ts';
import { newestPerOrder } from './order-state.ts';
import { type OrderBatch, type OrderEvent, validateBatch } from './schema.ts';
import { formatHour } from './time.ts';

/** DynamoDB transactions hold 100 items: one is the ledger entry, the rest counter items. */
export const MAX_COUNTERS_PER_PART = 99;

export interface BatchPlan {
  readonly batch: OrderBatch;
  readonly digest: string;
  /** Which counter shard this batch adds to (a hash of the batch id). */
  readonly shard: number;
  /** The newest event of each order in the batch. */
  readonly orderUpdates: readonly OrderEvent[];
  /** Distinct UTC hours touched, sorted. */
  readonly hours: readonly string[];
  /**
   * Counter increments, one per (hour, currency), split so that each part fits one transaction.
   * Parts are committed in order, each once; the batch is applied when its last part is.
   */
  readonly parts: readonly (readonly CounterDelta[])[];
  readonly archiveKey: string;
  readonly earliestMs: number;
  readonly latestMs: number;
}

export interface PlanOptions {
  readonly counterShards: number;
  /** Counter items per transaction; default and maximum MAX_COUNTERS_PER_PART. */
  readonly maxCountersPerPart?: number;
}

export const planBatch = (batch: OrderBatch, options: PlanOptions): BatchPlan => {
  const deltas = counterDeltas(batch.events);
  const perPart = Math.min(
    options.maxCountersPerPart ?? MAX_COUNTERS_PER_PART,
    MAX_COUNTERS_PER_PART,
  );
  const parts: CounterDelta[][] = [];
  for (let i = 0; i < deltas.length; i += perPart) parts.push(deltas.slice(i, i + perPart));
  const times = batch.events.map((e) => e.epochMs);
  const earliestMs = Math.min(...times);
  return {
    batch,
    digest: batchDigest(batch),
    shard: stableHash(batch.batchId).readUInt32BE(0) % options.counterShards,
    orderUpdates: newestPerOrder(batch.events),
    hours: [...new Set(deltas.map((d) => d.hour))],
    parts,
    archiveKey: rawArchiveKey(batch.batchId, formatHour(earliestMs)),
    earliestMs,
    latestMs: Math.max(...times),
  };
};

export interface LedgerEntry {
  readonly digest: string;
  readonly parts: number;
  readonly doneParts: ReadonlySet<number>;
}

export type ClaimResult =
  | { readonly claimed: true }
  | { readonly claimed: false; readonly entry: LedgerEntry };

export interface Ledger {
  /** Creates the ledger entry unless one exists; returns the existing one otherwise. */
  claim(plan: BatchPlan, expiresAtSeconds: number | undefined): Promise<ClaimResult>;
  /**
   * Atomically marks `part` done and adds its counters. True only when this call performed the
   * commit; false when the part was already done (by an earlier or a concurrent delivery).
   */
  commitPart(plan: BatchPlan, part: number): Promise<boolean>;
}

export interface OrderStore {
  /** Writes the event unless the order already holds a newer one; false when it was stale. */
  applyNewest(event: OrderEvent, batchId: string): Promise<boolean>;
}

export interface RawArchive {
  /** Stores the body once (create-only); a second call is a no-op. */
  putOnce(key: string, body: string): Promise<void>;
}

export interface HourNotifier {
  notifyHours(hours: readonly string[]): Promise<void>;
}

export interface Reject {
  readonly source: string;
  readonly messageId: string;
  readonly sentAtMs: number;
  readonly reason: RejectReason;
  readonly detail: string;
  readonly batchId?: string;
  readonly body: string;
}

export interface Quarantine {
  put(reject: Reject): Promise<void>;
}

export interface IngestPorts {
  readonly ledger: Ledger;
  readonly orders: OrderStore;
  readonly archive: RawArchive;
  readonly notifier: HourNotifier;
  readonly quarantine: Quarantine;
  readonly now: () => number;
}

export interface IngestSettings {
  readonly counterShards: number;
  /** Bodies larger than this are quarantined as oversize. */
  readonly maxBodyBytes: number;
  /** Ledger retention; undefined keeps ledger entries forever. */
  readonly ledgerRetentionSeconds?: number;
  /** Order writes in flight at once for one batch. */
  readonly writeConcurrency: number;
}

export interface IncomingMessage {
  readonly messageId: string;
  readonly body: string;
  readonly sentAtMs: number;
}

export type IngestOutcome =
  | { readonly kind: 'applied'; readonly plan: BatchPlan; readonly staleEvents: number }
  | { readonly kind: 'duplicate'; readonly plan: BatchPlan }
  | { readonly kind: 'rejected'; readonly reason: RejectReason; readonly detail: string };

/** Parses and validates a raw SQS body; throws InvalidMessageError for anything unusable. */
export const parseBatchBody = (body: string, maxBodyBytes: number): OrderBatch => {
  const bytes = Buffer.byteLength(body, 'utf8');
  if (bytes > maxBodyBytes) {
    throw new InvalidMessageError(
      'oversize',
      `body is ${bytes} bytes; the limit is ${maxBodyBytes}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    throw new InvalidMessageError('invalid-json', (error as Error).message, { cause: error });
  }
  const result = validateBatch(json);
  if (!result.ok) throw new InvalidMessageError(result.reason, result.detail);
  return result.batch;
};

const isCommitted = (entry: LedgerEntry) => entry.doneParts.size >= entry.parts;

const claimAndApply = async (
  plan: BatchPlan,
  body: string,
  ports: IngestPorts,
  settings: IngestSettings,
): Promise<IngestOutcome> => {
  const retention = settings.ledgerRetentionSeconds;
  let expiresAt: number | undefined;
  if (retention !== undefined) {
    const now = ports.now();
    // Past the retention the ledger may have forgotten this batch: applying it could count it
    // twice, so it is refused instead (see README, "Ledger retention").
    if (plan.earliestMs < now - retention * 1000) {
      throw new InvalidMessageError(
        'beyond-retention',
        `earliest event ${new Date(plan.earliestMs).toISOString()} is older than the ledger retention of ${retention}s`,
      );
    }
    expiresAt = Math.ceil((Math.max(now, plan.latestMs) + retention * 1000) / 1000);
  }

  const claim = await ports.ledger.claim(plan, expiresAt);
  let done: ReadonlySet<number> = new Set();
  if (!claim.claimed) {
    if (claim.entry.digest !== plan.digest) {
      throw new BatchConflictError(plan.batch.batchId, claim.entry.digest, plan.digest);
    }
    if (isCommitted(claim.entry)) {
      // Already applied (redelivery, redrive or replay): only make sure its hours get published.
      await ports.notifier.notifyHours(plan.hours);
      return { kind: 'duplicate', plan };
    }
    done = claim.entry.doneParts;
  }

  await ports.archive.putOnce(plan.archiveKey, body);
  const applied = await mapLimit(plan.orderUpdates, settings.writeConcurrency, (event) =>
    ports.orders.applyNewest(event, plan.batch.batchId),
  );
  // Parts commit in order, and a delivery moves past a part only once it is done, so the
  // delivery that commits the last part is the one that completed the batch: it alone reports
  // `applied`, and a concurrent twin that committed none or only earlier parts a `duplicate`.
  let completedHere = false;
  for (const [part] of plan.parts.entries()) {
    if (done.has(part)) continue;
    const committed = await ports.ledger.commitPart(plan, part);
    completedHere = committed && part === plan.parts.length - 1;
  }
  await ports.notifier.notifyHours(plan.hours);
  if (!completedHere) return { kind: 'duplicate', plan };
  return {
    kind: 'applied',
    plan,
    staleEvents: plan.batch.events.length - applied.filter(Boolean).length,
  };
};

/** Processes one SQS message: applies it, recognises it as a duplicate, or quarantines it. */
export const ingestMessage = async (
  message: IncomingMessage,
  ports: IngestPorts,
  settings: IngestSettings,
): Promise<IngestOutcome> => {
  let batchId: string | undefined;
  try {
    const batch = parseBatchBody(message.body, settings.maxBodyBytes);
    batchId = batch.batchId;
    return await claimAndApply(planBatch(batch, settings), message.body, ports, settings);
  } catch (error) {
    if (!(error instanceof InvalidMessageError)) throw error;
    await ports.quarantine.put({
      source: 'ingest',
      messageId: message.messageId,
      sentAtMs: message.sentAtMs,
      reason: error.reason,
      detail: error.detail,
      ...(batchId === undefined ? {} : { batchId }),
      body: message.body,
    });
    return { kind: 'rejected', reason: error.reason, detail: error.detail };
  }
};
