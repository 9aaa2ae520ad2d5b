/**
 * The local stand-in for DynamoDB point-in-time recovery: a consistent copy of a table taken
 * while nothing writes to it (a strongly consistent scan), and putting a table back to such a
 * copy (every current item deleted, the copy's items written). On AWS the same role is played
 * by `RestoreTableToPointInTime`; see the README's runbook.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type AttributeValue,
  BatchWriteItemCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ScanCommand,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import * as v from 'valibot';
import { DEFAULT_READ_LAG_MS } from './eventual-reads.ts';

type Item = Record<string, AttributeValue>;

export interface TableSnapshot {
  /** When the copy was taken (epoch ms): the restore point. */
  readonly takenAtMs: number;
  readonly items: readonly Item[];
}

const scanAll = async (dynamo: DynamoDBClient, table: string): Promise<Item[]> => {
  const items: Item[] = [];
  let startKey: Item | undefined;
  do {
    const page = await dynamo.send(
      new ScanCommand({
        TableName: table,
        ConsistentRead: true,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
};

/** Writes requests 25 at a time, retrying what DynamoDB leaves unprocessed. */
const writeAll = async (dynamo: DynamoDBClient, table: string, requests: WriteRequest[]) => {
  for (let i = 0; i < requests.length; i += 25) {
    let batch: WriteRequest[] = requests.slice(i, i + 25);
    for (let attempt = 0; batch.length > 0; attempt++) {
      if (attempt > 20) throw new Error(`${table}: writes left unprocessed after 20 attempts`);
      const out = await dynamo.send(
        new BatchWriteItemCommand({ RequestItems: { [table]: batch } }),
      );
      batch = out.UnprocessedItems?.[table] ?? [];
      if (batch.length > 0) await sleep(50 * 2 ** Math.min(attempt, 5));
    }
  }
};

/** A copy of every item, to restore later. Take it while nothing writes to the table. */
export const snapshotTable = async (
  dynamo: DynamoDBClient,
  table: string,
  now: () => number = Date.now,
): Promise<TableSnapshot> => {
  const takenAtMs = now();
  return { takenAtMs, items: await scanAll(dynamo, table) };
};

export interface RestoreOptions {
  /**
   * The lag of the edge's eventually consistent reads (`EmulatorOptions.readLagMs`). Default the
   * edge's default, one second.
   */
  readonly readLagMs?: number;
}

/**
 * Puts the table back to the snapshot: items written since are gone, items deleted return.
 * Returns once no read can answer from before the restore. On AWS a point-in-time restore
 * creates a new table, its indexes built before it turns active, so no read of it, consistent or
 * not, answers with an earlier state. Here the table is rewritten in place, and the edge's
 * lagging replica may still hold answers from the last `readLagMs`: the pending index read
 * right after the restore could leave out a batch the copy shows pending. So the restore waits
 * them out.
 */
export const restoreTable = async (
  dynamo: DynamoDBClient,
  table: string,
  snapshot: TableSnapshot,
  options: RestoreOptions = {},
): Promise<void> => {
  // The key's attribute names come from the table itself, as the template defined them.
  const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: table }));
  const keyNames = (Table?.KeySchema ?? []).flatMap((k) =>
    k.AttributeName ? [k.AttributeName] : [],
  );
  const current = await scanAll(dynamo, table);
  await writeAll(
    dynamo,
    table,
    current.map((item) => ({
      DeleteRequest: {
        Key: Object.fromEntries(keyNames.map((name) => [name, item[name] as AttributeValue])),
      },
    })),
  );
  await writeAll(
    dynamo,
    table,
    snapshot.items.map((item) => ({ PutRequest: { Item: item } })),
  );
  await sleep(options.readLagMs ?? DEFAULT_READ_LAG_MS);
};

const SnapshotFileSchema = v.object({
  takenAtMs: v.number(),
  table: v.string(),
  items: v.array(
    v.record(
      v.string(),
      v.custom<AttributeValue>(
        (x) => typeof x === 'object' && x !== null && Object.keys(x).length === 1,
        'must be a DynamoDB attribute value',
      ),
    ),
  ),
});

/** Where the local runtime's snapshots of a stack are kept: beside its local-state file. */
export const snapshotDir = (localStateFile: string, stackName: string) =>
  join(dirname(localStateFile), 'snapshots', stackName);

/** Saves a snapshot as `<dir>/<takenAtMs>.json`; returns the file. */
export const saveSnapshot = (dir: string, table: string, snapshot: TableSnapshot): string => {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${snapshot.takenAtMs}.json`);
  writeFileSync(file, JSON.stringify({ table, ...snapshot }));
  return file;
};

/** The latest snapshot taken at or before `atMs`; undefined when there is none. */
export const loadSnapshotAt = (dir: string, atMs: number): TableSnapshot | undefined => {
  const times = (existsSync(dir) ? readdirSync(dir) : [])
    .flatMap((name) => (/^\d+\.json$/.test(name) ? [Number(name.slice(0, -5))] : []))
    .filter((t) => t <= atMs)
    .sort((a, b) => a - b);
  const latest = times.at(-1);
  if (latest === undefined) return undefined;
  const parsed = v.parse(
    SnapshotFileSchema,
    JSON.parse(readFileSync(join(dir, `${latest}.json`), 'utf8')),
  );
  return { takenAtMs: parsed.takenAtMs, items: parsed.items };
};
