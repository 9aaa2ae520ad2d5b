/**
 * Applying one order batch exactly once, and each of its events once. Pure orchestration over
 * small ports, so it can be reasoned about (and tested) without AWS:
 *
 *   validate → claim ledger → [quarantine policy: decide which hours are too late] → archive
 *   raw (the orders read meanwhile) → settle each order (event claims + newest-wins, one write;
 *   the arrival marker filed meanwhile) → report event conflicts and too-late parts → commit the
 *   claimed events' counters (per part) → notify
 *
 * Every step before the commit converges when repeated, the commit happens once per batch part,
 * and every step after it is idempotent: a crash anywhere followed by a redelivery ends in the
 * same state. The ledger claim stores the digest first, so a reused batch id with other content
 * is stopped before it touches anything; an event claim does the same for one event re-sent in
 * another batch, and the batch counts only the events it claimed.
 */
import { type CounterDelta, counterDeltas } from './aggregate.ts';
import { eventsByOrder, type Settlement } from './claims.ts';
import { allSettledOrThrow } from './concurrency.ts';
import { type ConflictRecord, reportConflict } from './conflicts.ts';
import { batchDigest, stableHash } from './digest.ts';
import { BatchConflictError, InvalidMessageError, type RejectReason } from './errors.ts';
import { rawArchiveKey } from './keys.ts';
import { type HourMarks, type LatePolicy, lateHoursOf, reportTooLate } from './late-policy.ts';
import { retentionVerdict } from './retention.ts';
import { type OrderBatch, type OrderEvent, parseBatchBody } from './schema.ts';
import { formatHour } from './time.ts';
import type { EventClock } from './watermark.ts';

/**
 * DynamoDB transactions hold 100 items: one is the ledger entry, one the totals item (the last
 * part's commit counts the batch applied), the rest counter items.
 */
export const MAX_COUNTERS_PER_PART = 98;

export interface BatchPlan {
  readonly batch: OrderBatch;
  readonly digest: string;
  /** Which counter shard this batch adds to (a hash of the batch id). */
  readonly shard: number;
  /** The batch's events grouped by order (sorted by order id): one settle per order. */
  readonly orders: readonly (readonly OrderEvent[])[];
  /** Distinct UTC hours touched, sorted. */
  readonly hours: readonly string[];
  /**
   * Counter increments of all its events, one per (hour, currency), split so that each part fits
   * one transaction. This fixes the parts' layout; a commit adds only the increments of the
   * events the batch claimed (`claimedDeltas`). Parts are committed in order, each once; the
   * batch is applied when its last part is.
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
    orders: eventsByOrder(batch.events),
    hours: [...new Set(deltas.map((d) => d.hour))],
    parts,
    archiveKey: rawArchiveKey(batch.batchId, formatHour(earliestMs)),
    earliestMs,
    latestMs: Math.max(...times),
  };
};

/** A part's increments restricted to the events the batch counts (its claimed events). */
export const claimedDeltas = (
  plan: BatchPlan,
  part: number,
  counted: readonly OrderEvent[],
): CounterDelta[] => {
  const layout = new Set((plan.parts[part] ?? []).map((d) => `${d.hour}|${d.currency}`));
  return counterDeltas(counted.filter((e) => layout.has(`${e.hour}|${e.currency}`)));
};

export interface LedgerEntry {
  readonly digest: string;
  readonly parts: number;
  readonly doneParts: ReadonlySet<number>;
  /** Where the batch's raw body is archived (to show the first content of an event conflict). */
  readonly archiveKey: string;
  /** When the batch was first claimed (epoch ms); undefined for entries older than the field. */
  readonly receivedAtMs: number | undefined;
  /** The hours found closed when the batch decided (quarantine policy); undefined: undecided. */
  readonly lateHours: ReadonlySet<string> | undefined;
}

export type ClaimResult =
  | { readonly claimed: true }
  | { readonly claimed: false; readonly entry: LedgerEntry };

/** What one `commitPart` call did. */
export interface CommitResult {
  /**
   * True only when this call performed the commit; false when the part was already done (by an
   * earlier or a concurrent delivery).
   */
  readonly committed: boolean;
  /** Attempts cancelled by other transactions in flight on the same items, tried again. */
  readonly conflictRetries: number;
}

export interface Ledger {
  /** Creates the ledger entry unless one exists; returns the existing one otherwise. */
  claim(
    plan: BatchPlan,
    expiresAtSeconds: number | undefined,
    receivedAtMs: number,
  ): Promise<ClaimResult>;
  /** Atomically marks `part` done and adds `deltas` (the part's claimed increments). */
  commitPart(
    plan: BatchPlan,
    part: number,
    deltas: readonly CounterDelta[],
    /** On the last part: the batch is complete with this commit; it counted this many events. */
    completion?: { readonly events: number },
  ): Promise<CommitResult>;
  /** A batch's ledger entry (strongly consistent); undefined when it was never claimed. */
  entry(batchId: string): Promise<LedgerEntry | undefined>;
  /**
   * Records which of the batch's hours are too late, unless a delivery already did; returns the
   * recorded decision (the first one), which every delivery of the batch then follows.
   */
  recordLateHours(plan: BatchPlan, hours: readonly string[]): Promise<ReadonlySet<string>>;
}

/** The batch settling an order's events, and how long its claims must be kept. */
export interface Claimant {
  readonly batchId: string;
  /** When the batch's ledger entry expires (epoch seconds); undefined: never. */
  readonly expiresAtSeconds: number | undefined;
  readonly nowMs: number;
}

export interface OrderStore {
  /**
   * Settles each order's events of a batch (see `settleOrder`), writing each order's new claims
   * and state in one atomic write, at most `concurrency` orders at a time; returns what was
   * settled, order by order as given. The orders may be read at once, but no write starts before
   * `ready` resolves; when it rejects, nothing is written and the settle rejects with its reason.
   */
  settle(
    orders: readonly (readonly OrderEvent[])[],
    claimant: Claimant,
    concurrency: number,
    ready?: Promise<unknown>,
  ): Promise<Settlement[]>;
}

export interface RawArchive {
  /** Stores the body once (create-only); a second call is a no-op. */
  putOnce(key: string, body: string): Promise<void>;
  /** An archived body; undefined when there is none. */
  getText(key: string): Promise<string | undefined>;
  /** Files the archived batch under the hour it was received (idempotent). */
  recordArrival(receivedAtMs: number, archiveKey: string): Promise<void>;
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
  /** Names the reject object instead of the message id (several rejects of one message). */
  readonly id?: string;
  readonly conflict?: ConflictRecord;
}

export interface Quarantine {
  put(reject: Reject): Promise<void>;
}

export interface IngestPorts {
  readonly ledger: Ledger;
  /** Where the latest applied event time is kept (the watermark's source). */
  readonly clock: EventClock;
  readonly orders: OrderStore;
  readonly archive: RawArchive;
  readonly notifier: HourNotifier;
  readonly quarantine: Quarantine;
  /** Read under the quarantine policy only. */
  readonly marks: HourMarks;
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
  /** Default `amend`. */
  readonly latePolicy?: LatePolicy;
}

export interface IncomingMessage {
  readonly messageId: string;
  readonly body: string;
  readonly sentAtMs: number;
}

export type IngestOutcome =
  | {
      readonly kind: 'applied';
      readonly plan: BatchPlan;
      /** Events this batch claimed and counted. */
      readonly counted: number;
      /** Events skipped because another batch had claimed the same content. */
      readonly reclaimed: number;
      /** Events skipped because another batch had claimed other content (reported). */
      readonly conflicts: number;
      /** Counted events that did not become their order's state (an order held a newer one). */
      readonly staleEvents: number;
      /** Events refused because their hour was closed (quarantine policy). */
      readonly tooLate: number;
      /** Commits this delivery tried again after transaction conflicts (contention). */
      readonly commitConflictRetries: number;
    }
  | {
      readonly kind: 'duplicate';
      readonly plan: BatchPlan;
      /** As for `applied`: a concurrent twin may have committed some parts before losing. */
      readonly commitConflictRetries: number;
    }
  | { readonly kind: 'rejected'; readonly reason: RejectReason; readonly detail: string };

const isCommitted = (entry: LedgerEntry) => entry.doneParts.size >= entry.parts;

const claimAndApply = async (
  plan: BatchPlan,
  message: IncomingMessage,
  ports: IngestPorts,
  settings: IngestSettings,
): Promise<IngestOutcome> => {
  const retention = settings.ledgerRetentionSeconds;
  let expiresAt: number | undefined;
  if (retention !== undefined) {
    const verdict = retentionVerdict(plan, ports.now(), retention);
    if (verdict.refused) throw new InvalidMessageError('beyond-retention', verdict.detail);
    expiresAt = verdict.expiresAtSeconds;
  }

  const receivedAtMs = ports.now();
  const claim = await ports.ledger.claim(plan, expiresAt, receivedAtMs);
  let done: ReadonlySet<number> = new Set();
  if (!claim.claimed) {
    if (claim.entry.digest !== plan.digest) {
      throw new BatchConflictError(plan.batch.batchId, claim.entry.digest, plan.digest);
    }
    if (isCommitted(claim.entry)) {
      // Already applied (redelivery, redrive or replay): only make sure its hours get published
      // and the watermark knows its events (a crash may have come between).
      await ports.clock.advance(plan.latestMs, claim.entry.receivedAtMs ?? receivedAtMs);
      await ports.notifier.notifyHours(plan.hours);
      return { kind: 'duplicate', plan, commitConflictRetries: 0 };
    }
    done = claim.entry.doneParts;
  }

  const late = await lateHoursOf(plan, claim, ports, settings.latePolicy);
  // Filed under the first claim's hour, so every delivery of the batch writes the same marker.
  const firstReceived = claim.claimed ? receivedAtMs : claim.entry.receivedAtMs;
  const claimant = { batchId: plan.batch.batchId, expiresAtSeconds: expiresAt, nowMs: ports.now() };
  const onTime = plan.orders
    .map((events) => events.filter((e) => !late.has(e.hour)))
    .filter((events) => events.length > 0);
  // The raw body is archived before any order write (an event's claim may name this batch as its
  // first content), so the orders are read while it is written. The arrival marker need only
  // precede the commit (after it, a redelivery stops at the ledger and would not file it), so it
  // is written while the orders are. Two round trips fewer on every batch's path (a DynamoDB read
  // and an S3 PUT); every step here converges when repeated, and all have settled before a
  // failure is thrown.
  const archived = ports.archive.putOnce(plan.archiveKey, message.body);
  const [, settled] = await allSettledOrThrow(
    archived.then(() =>
      ports.archive.recordArrival(firstReceived ?? receivedAtMs, plan.archiveKey),
    ),
    ports.orders.settle(onTime, claimant, settings.writeConcurrency, archived),
  );
  const counted = settled.flatMap((s) => s.ours);
  const conflicts = settled.flatMap((s) => s.conflicts);
  // Reported before the commit: after it, a redelivery would stop at the ledger and a crash in
  // between would lose the report. Each report has its own key, so repeating it is harmless.
  for (const conflict of conflicts)
    await reportConflict(conflict, plan.batch.batchId, message, ports);
  const tooLate = plan.batch.events.filter((e) => late.has(e.hour));
  for (const hour of late) await reportTooLate(plan, hour, message, ports);
  // Parts commit in order, and a delivery moves past a part only once it is done, so the
  // delivery that commits the last part is the one that completed the batch: it alone reports
  // `applied`, and a concurrent twin that committed none or only earlier parts a `duplicate`.
  let completedHere = false;
  let commitConflictRetries = 0;
  for (const [part] of plan.parts.entries()) {
    if (done.has(part)) continue;
    const last = part === plan.parts.length - 1;
    const { committed, conflictRetries } = await ports.ledger.commitPart(
      plan,
      part,
      claimedDeltas(plan, part, counted),
      last ? { events: counted.length } : undefined,
    );
    commitConflictRetries += conflictRetries;
    completedHere = committed && last;
  }
  // After the commit: the watermark never passes an hour ahead of the events that made it move.
  await ports.clock.advance(plan.latestMs, firstReceived ?? receivedAtMs);
  await ports.notifier.notifyHours(plan.hours.filter((hour) => !late.has(hour)));
  if (!completedHere) return { kind: 'duplicate', plan, commitConflictRetries };
  return {
    kind: 'applied',
    plan,
    counted: counted.length,
    reclaimed: settled.reduce((n, s) => n + s.duplicates.length, 0),
    conflicts: conflicts.length,
    staleEvents: counted.length - settled.filter((s) => s.newState).length,
    tooLate: tooLate.length,
    commitConflictRetries,
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
    return await claimAndApply(planBatch(batch, settings), message, ports, settings);
  } catch (error) {
    if (!(error instanceof InvalidMessageError)) throw error;
    const named = batchId ?? error.namedBatchId;
    await ports.quarantine.put({
      source: 'ingest',
      messageId: message.messageId,
      sentAtMs: message.sentAtMs,
      reason: error.reason,
      detail: error.detail,
      ...(named === undefined ? {} : { batchId: named }),
      body: message.body,
    });
    return { kind: 'rejected', reason: error.reason, detail: error.detail };
  }
};
