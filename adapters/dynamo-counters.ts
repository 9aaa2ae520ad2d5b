/**
 * Reading an hour's counter items (and the finalizer's mark beside them) back into exact shards:
 * what the aggregator recomputes an hour from.
 */
import { type DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { Cell, CounterShard } from '../shared/aggregate.ts';
import type { CounterReader, HourCounters } from '../shared/aggregator.ts';
import type { FinalMark } from '../shared/lifecycle.ts';
import {
  COUNTER_ATTRIBUTE,
  COUNTER_SK,
  FINAL_SK,
  HOUR_PK_PREFIX,
  hourPartition,
  type Item,
  S,
  scanPrefix,
  toFinalMark,
} from './dynamo-items.ts';

const toShard = (item: Item): CounterShard => {
  const currency = COUNTER_SK.exec(item.sk?.S ?? '')?.[1];
  if (currency === undefined) return { updates: 0n, cells: [] };
  const cells = new Map<
    string,
    { status: string; currency: string; events: bigint; amountMinor: bigint }
  >();
  for (const [name, value] of Object.entries(item)) {
    const m = COUNTER_ATTRIBUTE.exec(name);
    if (!m || value.N === undefined) continue;
    const [, kind, status = ''] = m;
    const cell = cells.get(status) ?? { status, currency, events: 0n, amountMinor: 0n };
    if (kind === 'n') cell.events = BigInt(value.N);
    else cell.amountMinor = BigInt(value.N);
    cells.set(status, cell);
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

  /** Every hour that has counter items, sorted (a scan: for operators). */
  async hours(): Promise<string[]> {
    const items = await scanPrefix(this.#client, this.#table, HOUR_PK_PREFIX);
    return [...new Set(items.map((i) => (i.pk?.S ?? '').slice(HOUR_PK_PREFIX.length)))].sort();
  }

  async readHour(hour: string): Promise<HourCounters> {
    const shards: CounterShard[] = [];
    let mark: FinalMark | undefined;
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
      for (const item of page.Items ?? []) {
        if (item.sk?.S === FINAL_SK) mark = toFinalMark(item);
        else shards.push(toShard(item));
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return { shards, mark };
  }
}
