/**
 * The item layout of onceflow's one table, keyed (pk, sk): key prefixes, attribute codecs and
 * the plain reads. Only the DynamoDB adapter uses it; nothing outside adapters/ spells a key or
 * an attribute name.
 */
import {
  type AttributeValue,
  BatchGetItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { stableHash } from '../shared/digest.ts';
import type { FinalMark } from '../shared/lifecycle.ts';
import { sleep } from './backoff.ts';

export type Item = Record<string, AttributeValue>;

/** The table's key, both strings, and its TTL attribute: what the template must define. */
export const TABLE_KEY = { partition: 'pk', sort: 'sk' } as const;
export const TTL_ATTRIBUTE = 'expiresAt';

const LEDGER_SK = 'LEDGER';
const ORDER_SK = 'STATE';
export const ORDER_PK_PREFIX = 'ORDER#';
export const BATCH_PK_PREFIX = 'BATCH#';
export const HOUR_PK_PREFIX = 'HOUR#';
export const ledgerKey = (batchId: string) => ({
  pk: `${BATCH_PK_PREFIX}${batchId}`,
  sk: LEDGER_SK,
});
export const orderKey = (orderId: string) => ({ pk: `${ORDER_PK_PREFIX}${orderId}`, sk: ORDER_SK });
/**
 * The sparse index of pending batches: a ledger entry carries `PENDING_ATTRIBUTE` from its claim
 * until its last part commits, so the index holds exactly the batches in progress. Entries are
 * spread over a few partitions (by batch id), so no index partition takes every claim.
 */
export const PENDING_INDEX = 'PendingBatches';
export const PENDING_ATTRIBUTE = 'pendingShard';
export const PENDING_SORT_ATTRIBUTE = 'receivedAt';
export const PENDING_SHARDS = 8;
export const pendingShardOf = (batchId: string): string =>
  `P${stableHash(batchId).readUInt32BE(0) % PENDING_SHARDS}`;
/**
 * The index of orders by customer: order items carry `customerId` and `orderId`, nothing else
 * does, so the index holds exactly the orders. Keys only: an order's state changes on many
 * writes, its keys on none, so the index is written once per order (when it is first seen).
 */
export const CUSTOMER_INDEX = 'OrdersByCustomer';
export const CUSTOMER_ATTRIBUTE = 'customerId';
export const CUSTOMER_SORT_ATTRIBUTE = 'orderId';
/** Applied totals, one item per counter shard (its own partition: no hot key). */
export const STATS_PK_PREFIX = 'STATS#';
export const MAX_STATS_SHARDS = 100;
export const statsKey = (shard: number) => ({
  pk: `${STATS_PK_PREFIX}${shard.toString().padStart(3, '0')}`,
  sk: 'TOTALS',
});
/**
 * The latest applied event time (a watermark step, see shared/watermark.ts): one item, written
 * once per step per ingest environment, read by the finalizer.
 */
export const watermarkKey = { pk: 'WATERMARK', sk: 'LATEST' } as const;
export const WATERMARK_ATTRIBUTE = 'latestMs';
/** Counter items of one hour share a partition, so one query reads the whole hour. */
export const hourPartition = (hour: string) => `${HOUR_PK_PREFIX}${hour}`;
/**
 * The finalizer's mark on an hour, in the hour's partition: the query that reads the counters
 * reads it too, at no extra cost.
 */
export const FINAL_SK = 'FINAL';
export const finalMarkKey = (hour: string) => ({ pk: hourPartition(hour), sk: FINAL_SK });
/** Where the finalizer resumes: the first hour it has not finalized yet. */
export const finalizerCursorKey = { pk: 'FINALIZER', sk: 'CURSOR' } as const;

export const S = (value: string): AttributeValue => ({ S: value });
export const N = (value: number | bigint): AttributeValue => ({ N: value.toString() });
export const keyOf = (key: { pk: string; sk: string }): Item => ({ pk: S(key.pk), sk: S(key.sk) });

export const readString = (item: Item, name: string): string => {
  const value = item[name]?.S;
  if (value === undefined) throw new TypeError(`item ${item.pk?.S}: ${name} is not a string`);
  return value;
};

export const readInteger = (item: Item, name: string): bigint => {
  const value = item[name]?.N;
  if (value === undefined) throw new TypeError(`item ${item.pk?.S}: ${name} is not a number`);
  return BigInt(value);
};

/** One item, read strongly consistent; undefined when there is none. */
export const getItem = async (
  client: DynamoDBClient,
  table: string,
  key: { pk: string; sk: string },
): Promise<Item | undefined> =>
  (
    await client.send(
      new GetItemCommand({ TableName: table, Key: keyOf(key), ConsistentRead: true }),
    )
  ).Item;

/**
 * The items of `keys` that exist (BatchGetItem, 100 keys a request, unprocessed keys retried),
 * with only `attributes` when given.
 */
export const batchGet = async (
  client: DynamoDBClient,
  table: string,
  keys: readonly Item[],
  attributes: readonly string[] = [],
): Promise<Item[]> => {
  const names = Object.fromEntries(attributes.map((a, i) => [`#p${i}`, a]));
  const projection = attributes.length
    ? { ProjectionExpression: Object.keys(names).join(', '), ExpressionAttributeNames: names }
    : {};
  const items: Item[] = [];
  for (let i = 0; i < keys.length; i += 100) {
    let pending: Item[] = keys.slice(i, i + 100);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 0) await sleep(Math.min(1000, 50 * 2 ** attempt));
      const page = await client.send(
        new BatchGetItemCommand({
          RequestItems: { [table]: { Keys: pending, ConsistentRead: true, ...projection } },
        }),
      );
      items.push(...(page.Responses?.[table] ?? []));
      pending = page.UnprocessedKeys?.[table]?.Keys ?? [];
    }
  }
  return items;
};

/** Every item whose key starts with `prefix`, projected (a scan: for operators and tests). */
export const scanPrefix = async (
  client: DynamoDBClient,
  table: string,
  prefix: string,
  attributes: readonly string[] = [],
): Promise<Item[]> => {
  const items: Item[] = [];
  let startKey: Item | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: table,
        ConsistentRead: true,
        FilterExpression: 'begins_with(pk, :p)',
        ExpressionAttributeValues: { ':p': S(prefix) },
        ProjectionExpression: ['pk', ...attributes].join(', '),
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
};

/** A number's size as DynamoDB counts it: about one byte per two significant digits, plus one. */
const numberBytes = (n: string) =>
  Math.ceil(
    n
      .replace(/^-/, '')
      .replace(/^0+(?=\d)/, '')
      .replace('.', '').length / 2,
  ) + 1;

const valueBytes = (value: AttributeValue): number => {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return numberBytes(value.N);
  if (value.B !== undefined) return value.B.length;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.NS) return value.NS.reduce((s, n) => s + numberBytes(n), 0);
  if (value.SS) return value.SS.reduce((s, t) => s + Buffer.byteLength(t), 0);
  // Maps and lists: 3 bytes, plus each element's name and value and 1 byte per element.
  if (value.M) return 3 + itemBytes(value.M) + Object.keys(value.M).length;
  if (value.L) return 3 + value.L.reduce((s, v) => s + valueBytes(v) + 1, 0);
  return 0;
};

/** An item's size as DynamoDB counts it for its 400 KB limit and for billing: names plus values. */
export const itemBytes = (item: Item | undefined): number =>
  Object.entries(item ?? {}).reduce(
    (s, [name, value]) => s + Buffer.byteLength(name) + valueBytes(value),
    0,
  );

/** Counter items' sort key, `SHARD#<nnn>#<currency>`, and their attributes `n:`/`a:<status>`. */
export const COUNTER_SK = /^SHARD#\d{3}#([A-Z]{3})$/;
export const COUNTER_ATTRIBUTE = /^([na]):([a-z]+)$/;

/** An hour's `FINAL` item as the finalizer's mark. */
export const toFinalMark = (item: Item): FinalMark => ({
  // Marks written before closing existed were final at once: closed when finalized.
  closedAtMs: Number(readInteger(item, item.closedAt ? 'closedAt' : 'finalizedAt')),
  ...(item.finalizedAt?.N === undefined ? {} : { finalizedAtMs: Number(item.finalizedAt.N) }),
  ...(item.finalRevision?.N === undefined ? {} : { finalRevision: Number(item.finalRevision.N) }),
});
