/**
 * The DynamoDB side of onceflow: the batch ledger, newest-wins order items and sharded hourly
 * counters, all in one table keyed by (pk, sk). Numbers travel as strings and are read back
 * into bigint, so no amount ever passes through a float.
 */
import { randomUUID } from 'node:crypto';
import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  PutItemCommand,
  paginateQuery,
  TransactionCanceledException,
  type TransactWriteItem,
  TransactWriteItemsCommand,
  type TransactWriteItemsCommandInput,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { CounterDelta } from '../shared/aggregate.ts';
import { RetryableError } from '../shared/errors.ts';
import type {
  BatchPlan,
  ClaimResult,
  CommitResult,
  Ledger,
  LedgerEntry,
} from '../shared/ingest.ts';
import { jitteredBackoff, sleep } from './backoff.ts';
import {
  BATCH_PK_PREFIX,
  batchGet,
  getItem,
  hourPartition,
  type Item,
  keyOf,
  ledgerKey,
  MAX_STATS_SHARDS,
  N,
  PENDING_ATTRIBUTE,
  PENDING_INDEX,
  PENDING_SHARDS,
  PENDING_SORT_ATTRIBUTE,
  pendingShardOf,
  readInteger,
  readString,
  S,
  scanPrefix,
  statsKey,
  TTL_ATTRIBUTE,
} from './dynamo-items.ts';

/**
 * Whether a DynamoDB request (its input) touches this batch's ledger entry: the claim and every
 * commit do. For fault injection that must hit one batch only.
 */
export const touchesLedgerOf =
  (batchId: string) =>
  (input: unknown): boolean =>
    JSON.stringify(input).includes(JSON.stringify(ledgerKey(batchId).pk));

/** A batch in progress, as the pending index shows it. */
export interface PendingBatch {
  readonly batchId: string;
  readonly archiveKey: string;
  readonly receivedAtMs: number;
}

const toLedgerEntry = (item: Item): LedgerEntry => ({
  digest: readString(item, 'digest'),
  archiveKey: readString(item, 'archiveKey'),
  receivedAtMs: item.receivedAt?.N === undefined ? undefined : Number(item.receivedAt.N),
  parts: Number(readInteger(item, 'parts')),
  doneParts: new Set((item.doneParts?.NS ?? []).map(Number)),
  lateHours: item.lateHours?.L
    ? new Set(item.lateHours.L.flatMap((h) => (h.S === undefined ? [] : [h.S])))
    : undefined,
});

/**
 * Counter items: one per (hour, shard, currency), in the hour's partition. Each holds at most
 * one events and one amount attribute per status (top-level: ADD only works there), so it stays
 * under 1 KB whatever the hour collects, and an ADD always bills the same units.
 */
const counterKey = (hour: string, shard: number, currency: string) => ({
  pk: hourPartition(hour),
  sk: `SHARD#${shard.toString().padStart(3, '0')}#${currency}`,
});
const eventsAttribute = (status: string) => `n:${status}`;
const amountAttribute = (status: string) => `a:${status}`;

const counterUpdate = (table: string, shard: number, delta: CounterDelta): TransactWriteItem => {
  const names: Record<string, string> = { '#rev': 'rev' };
  const values: Item = { ':one': N(1) };
  const adds = ['#rev :one'];
  delta.cells.forEach((cell, i) => {
    names[`#n${i}`] = eventsAttribute(cell.status);
    names[`#a${i}`] = amountAttribute(cell.status);
    values[`:n${i}`] = N(cell.events);
    values[`:a${i}`] = N(cell.amountMinor);
    adds.push(`#n${i} :n${i}`, `#a${i} :a${i}`);
  });
  return {
    Update: {
      TableName: table,
      Key: keyOf(counterKey(delta.hour, shard, delta.currency)),
      UpdateExpression: `ADD ${adds.join(', ')}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
};

/**
 * The commit of one part: the ledger marks the part done (once: the condition) and every
 * counter item of the part gets its increments, atomically. A pure function of its arguments,
 * so the request can be checked against DynamoDB's limits without sending it.
 */
export const commitPartRequest = (
  table: string,
  plan: BatchPlan,
  part: number,
  deltas: readonly CounterDelta[],
  token: string,
  completion?: { readonly events: number },
): TransactWriteItemsCommandInput => {
  if (part >= plan.parts.length)
    throw new RangeError(`batch ${plan.batch.batchId} has no part ${part}`);
  // Parts commit in order (see ingest), so the last part's commit completes the batch: it leaves
  // the pending index and counts in the applied totals, exactly once (the ledger condition).
  const last = completion !== undefined;
  return {
    ClientRequestToken: token,
    TransactItems: [
      {
        Update: {
          TableName: table,
          Key: keyOf(ledgerKey(plan.batch.batchId)),
          UpdateExpression: last ? 'ADD doneParts :part REMOVE #pending' : 'ADD doneParts :part',
          ConditionExpression: 'digest = :digest AND NOT contains(doneParts, :n)',
          ...(last ? { ExpressionAttributeNames: { '#pending': PENDING_ATTRIBUTE } } : {}),
          ExpressionAttributeValues: {
            ':part': { NS: [String(part)] },
            ':n': N(part),
            ':digest': S(plan.digest),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      ...deltas.map((delta) => counterUpdate(table, plan.shard, delta)),
      ...(last
        ? [
            {
              Update: {
                TableName: table,
                Key: keyOf(statsKey(plan.shard)),
                UpdateExpression: 'ADD batches :one, events :events',
                ExpressionAttributeValues: { ':one': N(1), ':events': N(completion.events) },
              },
            },
          ]
        : []),
    ],
  };
};

/** The ledger entry a claim creates (pure, so its size can be checked against the limits). */
export const ledgerItem = (
  plan: BatchPlan,
  expiresAtSeconds: number | undefined,
  receivedAtMs: number,
): Item => ({
  ...keyOf(ledgerKey(plan.batch.batchId)),
  kind: S('batch'),
  batchId: S(plan.batch.batchId),
  digest: S(plan.digest),
  parts: N(plan.parts.length),
  events: N(plan.batch.events.length),
  archiveKey: S(plan.archiveKey),
  [PENDING_SORT_ATTRIBUTE]: N(receivedAtMs),
  // In the pending index until the last part commits (a single-part batch: its one commit).
  [PENDING_ATTRIBUTE]: S(pendingShardOf(plan.batch.batchId)),
  ...(expiresAtSeconds === undefined ? {} : { [TTL_ATTRIBUTE]: N(expiresAtSeconds) }),
});

export interface DynamoLedgerOptions {
  /** A commit cancelled by a transaction conflict is tried this many times in all. Default 4. */
  readonly commitAttempts?: number;
  /** Upper bound of the jittered wait before the second attempt, doubled after. Default 25 ms. */
  readonly commitBackoffMs?: number;
}

/**
 * A cancellation caused only by other transactions in flight on the same items (every reason
 * `TransactionConflict` or `None`): nothing was written, and trying again may succeed.
 */
const isConflictOnly = (error: TransactionCanceledException) => {
  const codes = (error.CancellationReasons ?? []).map((r) => r.Code ?? 'None');
  return (
    codes.includes('TransactionConflict') &&
    codes.every((c) => c === 'TransactionConflict' || c === 'None')
  );
};

export class DynamoLedger implements Ledger {
  readonly #client: DynamoDBClient;
  readonly #table: string;
  readonly #commitAttempts: number;
  readonly #commitBackoffMs: number;

  constructor(client: DynamoDBClient, table: string, options: DynamoLedgerOptions = {}) {
    this.#client = client;
    this.#table = table;
    this.#commitAttempts = options.commitAttempts ?? 4;
    this.#commitBackoffMs = options.commitBackoffMs ?? 25;
  }

  /** A batch's ledger entry, read strongly consistent; undefined if it was never claimed. */
  async entry(batchId: string): Promise<LedgerEntry | undefined> {
    const item = await getItem(this.#client, this.#table, ledgerKey(batchId));
    return item ? toLedgerEntry(item) : undefined;
  }

  /** Batch ids whose entry is committed and those still pending (a scan of the ledger: tests). */
  async batches(): Promise<{ applied: string[]; pending: string[] }> {
    const result = { applied: [] as string[], pending: [] as string[] };
    for (const item of await scanPrefix(this.#client, this.#table, BATCH_PK_PREFIX, [
      'parts',
      'doneParts',
    ])) {
      const batchId = (item.pk?.S ?? '').slice(BATCH_PK_PREFIX.length);
      const done = item.doneParts?.NS?.length ?? 0;
      (done >= Number(item.parts?.N ?? 1) ? result.applied : result.pending).push(batchId);
    }
    return result;
  }

  /**
   * The batches in progress, oldest first, from the sparse pending index: reads only them, however
   * many batches the ledger holds. The index is eventually consistent (seconds behind at most).
   */
  async pendingBatches(): Promise<PendingBatch[]> {
    const shard = async (n: number) => {
      const found: PendingBatch[] = [];
      const pages = paginateQuery(
        { client: this.#client },
        {
          TableName: this.#table,
          IndexName: PENDING_INDEX,
          KeyConditionExpression: '#shard = :shard',
          ExpressionAttributeNames: { '#shard': PENDING_ATTRIBUTE },
          ExpressionAttributeValues: { ':shard': S(`P${n}`) },
        },
      );
      for await (const page of pages)
        for (const item of page.Items ?? [])
          found.push({
            batchId: readString(item, 'batchId'),
            archiveKey: readString(item, 'archiveKey'),
            receivedAtMs: Number(readInteger(item, PENDING_SORT_ATTRIBUTE)),
          });
      return found;
    };
    const shards = await Promise.all(Array.from({ length: PENDING_SHARDS }, (_, n) => shard(n)));
    return shards.flat().sort((a, b) => a.receivedAtMs - b.receivedAtMs);
  }

  /** Batches applied and the events they counted, summed over the totals items (no scan). */
  async totals(): Promise<{ batches: number; events: number }> {
    const totals = { batches: 0, events: 0 };
    const keys = Array.from({ length: MAX_STATS_SHARDS }, (_, i) => keyOf(statsKey(i)));
    for (const item of await batchGet(this.#client, this.#table, keys)) {
      totals.batches += Number(item.batches?.N ?? 0);
      totals.events += Number(item.events?.N ?? 0);
    }
    return totals;
  }

  /** The archive keys of the batches still pending (from the pending index). */
  async pendingArchiveKeys(): Promise<string[]> {
    return (await this.pendingBatches()).map((b) => b.archiveKey);
  }

  async claim(
    plan: BatchPlan,
    expiresAtSeconds: number | undefined,
    receivedAtMs: number,
  ): Promise<ClaimResult> {
    try {
      await this.#client.send(
        new PutItemCommand({
          TableName: this.#table,
          Item: ledgerItem(plan, expiresAtSeconds, receivedAtMs),
          ConditionExpression: 'attribute_not_exists(pk)',
          // The existing entry comes back with the failure: no second read for a duplicate.
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { claimed: true };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException && error.Item) {
        return { claimed: false, entry: toLedgerEntry(error.Item) };
      }
      throw error;
    }
  }

  async recordLateHours(plan: BatchPlan, hours: readonly string[]): Promise<ReadonlySet<string>> {
    try {
      await this.#client.send(
        new UpdateItemCommand({
          TableName: this.#table,
          Key: keyOf(ledgerKey(plan.batch.batchId)),
          UpdateExpression: 'SET lateHours = :late',
          // The first delivery to decide wins: every other one follows its decision.
          ConditionExpression: 'digest = :digest AND attribute_not_exists(lateHours)',
          ExpressionAttributeValues: {
            ':late': { L: hours.map((hour) => S(hour)) },
            ':digest': S(plan.digest),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return new Set(hours);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const decided = error.Item && toLedgerEntry(error.Item);
      if (decided?.digest !== plan.digest || decided.lateHours === undefined)
        throw new RetryableError(
          `batch ${plan.batch.batchId}: ledger entry changed while deciding its late hours`,
          { cause: error },
        );
      return decided.lateHours;
    }
  }

  async commitPart(
    plan: BatchPlan,
    part: number,
    deltas: readonly CounterDelta[],
    completion?: { readonly events: number },
  ): Promise<CommitResult> {
    for (let attempt = 1; ; attempt++) {
      // A fresh token per call: the SDK's own retries of this request share it (so a retry
      // after a lost answer is idempotent), while another delivery of the batch sends its own
      // token and meets the ledger condition instead of a token replay. A token derived from the
      // batch made a concurrent twin's commit "succeed" as a replay, and both reported the batch
      // applied. A cancelled transaction wrote nothing, so its next attempt takes a new token too.
      const request = commitPartRequest(this.#table, plan, part, deltas, randomUUID(), completion);
      try {
        await this.#client.send(new TransactWriteItemsCommand(request));
        return { committed: true, conflictRetries: attempt - 1 };
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) throw error;
        const ledger = error.CancellationReasons?.[0];
        if (ledger?.Code === 'ConditionalCheckFailed') {
          // The condition failed on the ledger: a concurrent delivery committed this part first.
          const entry = ledger.Item ? toLedgerEntry(ledger.Item) : undefined;
          if (entry?.digest === plan.digest && entry.doneParts.has(part))
            return { committed: false, conflictRetries: attempt - 1 };
          throw new RetryableError(
            `batch ${plan.batch.batchId} part ${part}: ledger entry missing or changed during commit`,
            { cause: error },
          );
        }
        // Concurrent commits share the hour's counter items and the shard's totals item, and
        // DynamoDB cancels a transaction that meets another one in flight on an item (the SDK
        // does not retry that). Tried again here, a conflict costs milliseconds; failed, it
        // would cost the whole message a visibility timeout and one of its receives.
        if (!isConflictOnly(error) || attempt >= this.#commitAttempts) throw error;
        await sleep(jitteredBackoff(attempt, this.#commitBackoffMs));
      }
    }
  }
}
