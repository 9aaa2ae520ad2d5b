/**
 * The DynamoDB side of onceflow: the batch ledger, newest-wins order items and sharded hourly
 * counters, all in one table keyed by (pk, sk). Numbers travel as strings and are read back
 * into bigint, so no amount ever passes through a float.
 */
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  TransactionCanceledException,
  type TransactWriteItem,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import type { Cell, CounterShard } from '../shared/aggregate.ts';
import type { CounterReader } from '../shared/aggregator.ts';
import { stableHash } from '../shared/digest.ts';
import { RetryableError } from '../shared/errors.ts';
import type { BatchPlan, ClaimResult, Ledger, LedgerEntry, OrderStore } from '../shared/ingest.ts';
import {
  amountAttribute,
  COUNTER_ATTRIBUTE,
  counterKey,
  eventsAttribute,
  hourPartition,
  ledgerKey,
  ORDER_PK_PREFIX,
  orderKey,
} from '../shared/keys.ts';
import type { OrderView } from '../shared/order-state.ts';
import type { OrderEvent } from '../shared/schema.ts';

type Item = Record<string, AttributeValue>;

const S = (value: string): AttributeValue => ({ S: value });
const N = (value: number | bigint): AttributeValue => ({ N: value.toString() });
const keyOf = (key: { pk: string; sk: string }): Item => ({ pk: S(key.pk), sk: S(key.sk) });

const readString = (item: Item, name: string): string => {
  const value = item[name]?.S;
  if (value === undefined) throw new TypeError(`item ${item.pk?.S}: ${name} is not a string`);
  return value;
};

const readInteger = (item: Item, name: string): bigint => {
  const value = item[name]?.N;
  if (value === undefined) throw new TypeError(`item ${item.pk?.S}: ${name} is not a number`);
  return BigInt(value);
};

const toLedgerEntry = (item: Item): LedgerEntry => ({
  digest: readString(item, 'digest'),
  parts: Number(readInteger(item, 'parts')),
  doneParts: new Set((item.doneParts?.NS ?? []).map(Number)),
});

/**
 * A ClientRequestToken makes an SDK retry of a commit idempotent for ten minutes, provided the
 * request is identical: it is derived from the table and the batch, never from the clock.
 * Tokens are scoped to the account and region, not the table: without the table name, the same
 * batch sent to two stacks (dev and prod) would fail with IdempotentParameterMismatch.
 */
const requestToken = (table: string, plan: BatchPlan, part: number) =>
  stableHash(`${table}|${plan.batch.batchId}|${plan.digest}|${part}`).toString('hex').slice(0, 36);

export class DynamoLedger implements Ledger {
  readonly #client: DynamoDBClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, table: string) {
    this.#client = client;
    this.#table = table;
  }

  async claim(plan: BatchPlan, expiresAtSeconds: number | undefined): Promise<ClaimResult> {
    try {
      await this.#client.send(
        new PutItemCommand({
          TableName: this.#table,
          Item: {
            ...keyOf(ledgerKey(plan.batch.batchId)),
            kind: S('batch'),
            batchId: S(plan.batch.batchId),
            digest: S(plan.digest),
            parts: N(plan.parts.length),
            events: N(plan.batch.events.length),
            archiveKey: S(plan.archiveKey),
            ...(expiresAtSeconds === undefined ? {} : { expiresAt: N(expiresAtSeconds) }),
          },
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

  async commitPart(plan: BatchPlan, part: number): Promise<boolean> {
    const deltas = plan.parts[part];
    if (!deltas) throw new RangeError(`batch ${plan.batch.batchId} has no part ${part}`);
    const counterUpdates: TransactWriteItem[] = deltas.map((delta) => {
      const names: Record<string, string> = { '#rev': 'rev' };
      const values: Item = { ':one': N(1) };
      const adds = ['#rev :one'];
      delta.cells.forEach((cell, i) => {
        names[`#n${i}`] = eventsAttribute(cell.status, cell.currency);
        names[`#a${i}`] = amountAttribute(cell.status, cell.currency);
        values[`:n${i}`] = N(cell.events);
        values[`:a${i}`] = N(cell.amountMinor);
        adds.push(`#n${i} :n${i}`, `#a${i} :a${i}`);
      });
      return {
        Update: {
          TableName: this.#table,
          Key: keyOf(counterKey(delta.hour, plan.shard)),
          UpdateExpression: `ADD ${adds.join(', ')}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      };
    });
    try {
      await this.#client.send(
        new TransactWriteItemsCommand({
          ClientRequestToken: requestToken(this.#table, plan, part),
          TransactItems: [
            {
              Update: {
                TableName: this.#table,
                Key: keyOf(ledgerKey(plan.batch.batchId)),
                UpdateExpression: 'ADD doneParts :part',
                ConditionExpression: 'digest = :digest AND NOT contains(doneParts, :n)',
                ExpressionAttributeValues: {
                  ':part': { NS: [String(part)] },
                  ':n': N(part),
                  ':digest': S(plan.digest),
                },
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
            ...counterUpdates,
          ],
        }),
      );
      return true;
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const ledger = error.CancellationReasons?.[0];
      if (ledger?.Code !== 'ConditionalCheckFailed') throw error;
      // The condition failed on the ledger: a concurrent delivery committed this part first.
      const entry = ledger.Item ? toLedgerEntry(ledger.Item) : undefined;
      if (entry?.digest === plan.digest && entry.doneParts.has(part)) return false;
      throw new RetryableError(
        `batch ${plan.batch.batchId} part ${part}: ledger entry missing or changed during commit`,
      );
    }
  }
}

export class DynamoOrderStore implements OrderStore {
  readonly #client: DynamoDBClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, table: string) {
    this.#client = client;
    this.#table = table;
  }

  async applyNewest(event: OrderEvent, batchId: string): Promise<boolean> {
    try {
      await this.#client.send(
        new PutItemCommand({
          TableName: this.#table,
          Item: {
            ...keyOf(orderKey(event.orderId)),
            kind: S('order'),
            orderId: S(event.orderId),
            customerId: S(event.customerId),
            status: S(event.status),
            amount: S(event.amount),
            currency: S(event.currency),
            eventTime: S(event.eventTime),
            eventId: S(event.eventId),
            t: S(event.instant),
            batchId: S(batchId),
          },
          // Newest wins on (event time, event id); an older or equal event is stale.
          ConditionExpression: 'attribute_not_exists(pk) OR t < :t OR (t = :t AND eventId < :eid)',
          ExpressionAttributeValues: { ':t': S(event.instant), ':eid': S(event.eventId) },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  /** Every order's current state, sorted by order id (a scan: for operators, not hot paths). */
  async listOrders(): Promise<OrderView[]> {
    const orders: OrderView[] = [];
    let startKey: Item | undefined;
    do {
      const page = await this.#client.send(
        new ScanCommand({
          TableName: this.#table,
          ConsistentRead: true,
          FilterExpression: 'begins_with(pk, :prefix)',
          ExpressionAttributeValues: { ':prefix': S(ORDER_PK_PREFIX) },
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      for (const item of page.Items ?? []) {
        orders.push({
          orderId: readString(item, 'orderId'),
          customerId: readString(item, 'customerId'),
          status: readString(item, 'status'),
          amount: readString(item, 'amount'),
          currency: readString(item, 'currency'),
          eventTime: readString(item, 'eventTime'),
        });
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return orders.sort((a, b) => (a.orderId < b.orderId ? -1 : a.orderId > b.orderId ? 1 : 0));
  }
}

const toShard = (item: Item): CounterShard => {
  const cells = new Map<
    string,
    { status: string; currency: string; events: bigint; amountMinor: bigint }
  >();
  for (const [name, value] of Object.entries(item)) {
    const m = COUNTER_ATTRIBUTE.exec(name);
    if (!m || value.N === undefined) continue;
    const [, kind, status = '', currency = ''] = m;
    const key = `${status}:${currency}`;
    const cell = cells.get(key) ?? { status, currency, events: 0n, amountMinor: 0n };
    if (kind === 'n') cell.events = BigInt(value.N);
    else cell.amountMinor = BigInt(value.N);
    cells.set(key, cell);
  }
  return {
    updates: item.rev?.N === undefined ? 0n : BigInt(item.rev.N),
    cells: [...cells.values()] as Cell[],
  };
};

export class DynamoCounterReader implements CounterReader {
  readonly #client: DynamoDBClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, table: string) {
    this.#client = client;
    this.#table = table;
  }

  async readHour(hour: string): Promise<CounterShard[]> {
    const shards: CounterShard[] = [];
    let startKey: Item | undefined;
    do {
      const page = await this.#client.send(
        new QueryCommand({
          TableName: this.#table,
          ConsistentRead: true,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': S(hourPartition(hour)) },
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      shards.push(...(page.Items ?? []).map(toShard));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return shards;
  }
}
