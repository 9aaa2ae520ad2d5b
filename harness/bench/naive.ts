/**
 * The naive writes both baselines make: one unconditional PutItem per event (last writer wins),
 * then one plain ADD per counter cell, in a table of their own layout; and reading it back in
 * the model's shape. (Amounts in hundredths: the bench's currencies all have two decimals.)
 */
import {
  type DynamoDBClient,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { mapLimit } from '../../shared/concurrency.ts';
import type { GeneratedEvent } from '../generate.ts';
import type { ModelHour } from '../model.ts';
import type { PassState } from './approaches.ts';

export interface Batch {
  readonly batchId: string;
  readonly events: readonly GeneratedEvent[];
}

const hourOf = (time: string) => `${new Date(Date.parse(time)).toISOString().slice(0, 13)}:00:00Z`;
const cents = (amount: string) => {
  const [w = '0', f = ''] = amount.split('.');
  return BigInt(w) * 100n + BigInt(f.padEnd(2, '0'));
};

/** One unconditional PutItem per event (last writer wins), then one plain ADD per counter cell. */
export const naiveWrites = async (dynamo: DynamoDBClient, table: string, batch: Batch) => {
  // As many writes in flight as onceflow allows itself, so throughput compares fairly.
  await mapLimit(batch.events, 16, (e) =>
    dynamo.send(
      new PutItemCommand({
        TableName: table,
        Item: {
          pk: { S: `naive-order|${e.orderId}` },
          sk: { S: 'STATE' },
          orderId: { S: e.orderId },
          customerId: { S: e.customerId },
          status: { S: e.status },
          amount: { S: e.amount },
          currency: { S: e.currency },
          eventTime: { S: e.eventTime },
        },
      }),
    ),
  );
  const cells = new Map<string, { hour: string; key: string; n: number; minor: bigint }>();
  for (const e of batch.events) {
    const hour = hourOf(e.eventTime);
    const key = `${e.status}#${e.currency}`;
    const cell = cells.get(`${hour}|${key}`) ?? { hour, key, n: 0, minor: 0n };
    cell.n++;
    cell.minor += cents(e.amount);
    cells.set(`${hour}|${key}`, cell);
  }
  await mapLimit([...cells.values()], 16, (cell) =>
    dynamo.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: `CELL#${cell.hour}` }, sk: { S: cell.key } },
        UpdateExpression: 'ADD n :n, a :a',
        ExpressionAttributeValues: {
          ':n': { N: String(cell.n) },
          ':a': { N: cell.minor.toString() },
        },
      }),
    ),
  );
};

/** Reads the naive layout back into the model's shape. */
export const naiveState = async (dynamo: DynamoDBClient, table: string): Promise<PassState> => {
  const items: Record<string, { S?: string; N?: string }>[] = [];
  let startKey: Record<string, never> | undefined;
  do {
    const page = await dynamo.send(
      // Consistent: the end state, not what a replica has seen of it.
      new ScanCommand({
        TableName: table,
        ConsistentRead: true,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    items.push(...((page.Items ?? []) as typeof items));
    startKey = page.LastEvaluatedKey as typeof startKey;
  } while (startKey);
  const orders = items
    .filter((i) => i.pk?.S?.startsWith('naive-order|'))
    .map((i) => ({
      orderId: i.orderId?.S ?? '',
      customerId: i.customerId?.S ?? '',
      status: i.status?.S ?? '',
      amount: i.amount?.S ?? '',
      currency: i.currency?.S ?? '',
      eventTime: i.eventTime?.S ?? '',
    }))
    .sort((a, b) => (a.orderId < b.orderId ? -1 : 1));
  const hours = new Map<string, ModelHour>();
  for (const i of items
    .filter((x) => x.pk?.S?.startsWith('CELL#'))
    .sort((a, b) => `${a.pk?.S}${a.sk?.S}`.localeCompare(`${b.pk?.S}${b.sk?.S}`))) {
    const hour = (i.pk?.S ?? '').slice(5);
    const [status = '', currency = ''] = (i.sk?.S ?? '').split('#');
    const h = hours.get(hour) ?? { hour, events: 0, byStatus: {} };
    const n = Number(i.n?.N ?? 0);
    const minor = BigInt(i.a?.N ?? 0);
    const s = h.byStatus[status] ?? { events: 0, amounts: {} };
    s.events += n;
    s.amounts[currency] = `${minor / 100n}.${(minor % 100n).toString().padStart(2, '0')}`;
    h.byStatus[status] = s;
    hours.set(hour, { ...h, events: h.events + n });
  }
  return { orders, hourly: [...hours.values()].sort((a, b) => (a.hour < b.hour ? -1 : 1)) };
};

export const parseBatch = (body: string): Batch => {
  const value: unknown = JSON.parse(body);
  if (typeof value !== 'object' || value === null || !('batchId' in value) || !('events' in value))
    throw new Error('not a batch');
  return value as Batch;
};
