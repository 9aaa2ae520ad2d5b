/**
 * The edge's lagging replica (local/eventual-reads.ts): DynamoDB's eventually consistent reads
 * may answer with state a moment old, where DynamoDB Local always answers fresh. Through the
 * edge with real clients (AWS SDK v3 and v2), against DynamoDB Local.
 */

import { createServer } from 'node:http';
import {
  BatchGetItemCommand,
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import AWS from 'aws-sdk';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/emulators.ts';
import { isEventualRead, LaggingReads } from '../../local/eventual-reads.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { useEmulators } from '../support/emulators.ts';
import { uniqueName } from '../support/pipeline.ts';
import { listenLocally } from '../support/servers.ts';

const dynamoAt = (endpoint: string) =>
  new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });

/** A table with one item `k` = 'a' (`v` = 1) and an index on `g`, as a test's own. */
const tableWithItem = async (dynamo: DynamoDBClient) => {
  const table = uniqueName('lag');
  await dynamo.send(
    new CreateTableCommand({
      TableName: table,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'k', AttributeType: 'S' },
        { AttributeName: 'g', AttributeType: 'S' },
      ],
      KeySchema: [{ AttributeName: 'k', KeyType: 'HASH' }],
      GlobalSecondaryIndexes: [
        {
          IndexName: 'byG',
          KeySchema: [{ AttributeName: 'g', KeyType: 'HASH' }],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  );
  await dynamo.send(
    new PutItemCommand({ TableName: table, Item: { k: { S: 'a' }, g: { S: 'x' }, v: { N: '1' } } }),
  );
  const bump = (to: number) =>
    dynamo.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { k: { S: 'a' } },
        UpdateExpression: 'SET v = :v',
        ExpressionAttributeValues: { ':v': { N: String(to) } },
      }),
    );
  /** Every way to read the item, each answering its `v`. */
  const reads = {
    getItem: async (consistent?: boolean) =>
      (
        await dynamo.send(
          new GetItemCommand({
            TableName: table,
            Key: { k: { S: 'a' } },
            ...(consistent === undefined ? {} : { ConsistentRead: consistent }),
          }),
        )
      ).Item?.v?.N,
    query: async (consistent?: boolean) =>
      (
        await dynamo.send(
          new QueryCommand({
            TableName: table,
            KeyConditionExpression: 'k = :k',
            ExpressionAttributeValues: { ':k': { S: 'a' } },
            ...(consistent === undefined ? {} : { ConsistentRead: consistent }),
          }),
        )
      ).Items?.[0]?.v?.N,
    scan: async (consistent?: boolean) =>
      (
        await dynamo.send(
          new ScanCommand({
            TableName: table,
            ...(consistent === undefined ? {} : { ConsistentRead: consistent }),
          }),
        )
      ).Items?.[0]?.v?.N,
    batchGet: async (consistent?: boolean) =>
      (
        await dynamo.send(
          new BatchGetItemCommand({
            RequestItems: {
              [table]: {
                Keys: [{ k: { S: 'a' } }],
                ...(consistent === undefined ? {} : { ConsistentRead: consistent }),
              },
            },
          }),
        )
      ).Responses?.[table]?.[0]?.v?.N,
    index: async () =>
      (
        await dynamo.send(
          new QueryCommand({
            TableName: table,
            IndexName: 'byG',
            KeyConditionExpression: 'g = :g',
            ExpressionAttributeValues: { ':g': { S: 'x' } },
          }),
        )
      ).Items?.[0]?.v?.N,
  };
  return { table, bump, reads };
};

describe('eventually consistent reads through the edge', () => {
  // A lag longer than any test: what is stale stays stale, however busy the machine.
  const lagging = useEmulators({ readLagMs: 10 * 60_000 });

  it('answers a read repeated after a write with the earlier state unless it asks for consistency', async () => {
    const { bump, reads } = await tableWithItem(dynamoAt(lagging().endpoint));
    const eventual = [reads.getItem, reads.query, reads.scan, reads.batchGet] as const;
    for (const read of eventual) expect(await read()).toBe('1');
    for (const read of eventual) expect(await read(false)).toBe('1');
    expect(await reads.index()).toBe('1');
    await bump(2);
    // The same reads again: a replica that has not seen the write yet.
    for (const read of eventual) expect(await read()).toBe('1');
    for (const read of eventual) expect(await read(false)).toBe('1');
    expect(await reads.index()).toBe('1');
    // Consistent reads see every write that succeeded before them.
    for (const read of eventual) expect(await read(true)).toBe('2');
  });

  it('answers a read that asks nothing of its consistency from the replica for the AWS SDK v2 too', async () => {
    const endpoint = lagging().endpoint;
    const { table, bump } = await tableWithItem(dynamoAt(endpoint));
    const v2 = new AWS.DynamoDB.DocumentClient({
      endpoint,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
    });
    const read = async (ConsistentRead?: boolean) =>
      (
        await v2
          .get({ TableName: table, Key: { k: 'a' }, ...(ConsistentRead ? { ConsistentRead } : {}) })
          .promise()
      ).Item?.v;
    expect(await read()).toBe(1);
    await bump(3);
    expect(await read()).toBe(1);
    expect(await read(true)).toBe(3);
  });

  it('answers errors fresh, each time', async () => {
    const dynamo = dynamoAt(lagging().endpoint);
    const missing = uniqueName('missing');
    const get = () =>
      dynamo.send(new GetItemCommand({ TableName: missing, Key: { k: { S: 'a' } } }));
    await expect(get()).rejects.toThrow(/non-existent table|not found/i);
    await dynamo.send(
      new CreateTableCommand({
        TableName: missing,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'k', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'k', KeyType: 'HASH' }],
      }),
    );
    expect((await get()).Item).toBeUndefined();
  });
});

describe('the replica catching up', () => {
  const briefly = useEmulators({ readLagMs: 200 });
  const fresh = useEmulators({ readLagMs: 0 });

  it('answers an eventually consistent read with the latest state once the lag has passed', async () => {
    const { bump, reads } = await tableWithItem(dynamoAt(briefly().endpoint));
    expect(await reads.getItem()).toBe('1');
    await bump(2);
    const deadline = Date.now() + DEADLINE_MS;
    while ((await reads.getItem()) !== '2') {
      if (Date.now() > deadline) throw new Error('the eventually consistent read never caught up');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await reads.index()).toBe('2');
  });

  it('answers every read fresh with no lag, as DynamoDB Local does', async () => {
    const { bump, reads } = await tableWithItem(dynamoAt(fresh().endpoint));
    expect(await reads.getItem()).toBe('1');
    expect(await reads.index()).toBe('1');
    await bump(2);
    expect(await reads.getItem()).toBe('2');
    expect(await reads.index()).toBe('2');
  });
});

describe('which reads may lag', () => {
  it('tells eventually consistent reads from consistent ones and from other calls', () => {
    const read = (action: string, body: unknown) => isEventualRead(action, JSON.stringify(body));
    expect(read('GetItem', { TableName: 't' })).toBe(true);
    expect(read('GetItem', { TableName: 't', ConsistentRead: false })).toBe(true);
    expect(read('GetItem', { TableName: 't', ConsistentRead: true })).toBe(false);
    expect(read('Query', { TableName: 't', ConsistentRead: true })).toBe(false);
    expect(read('Query', { TableName: 't', IndexName: 'i' })).toBe(true);
    expect(read('Scan', { TableName: 't', IndexName: 'i', ConsistentRead: true })).toBe(true);
    const tables = (a: boolean, b?: boolean) => ({
      RequestItems: {
        a: { Keys: [], ConsistentRead: a },
        b: { Keys: [], ...(b === undefined ? {} : { ConsistentRead: b }) },
      },
    });
    expect(read('BatchGetItem', tables(true, true))).toBe(false);
    expect(read('BatchGetItem', tables(true))).toBe(true);
    expect(read('BatchGetItem', tables(true, false))).toBe(true);
    expect(read('PutItem', { TableName: 't' })).toBe(false);
    expect(read('TransactGetItems', { TransactItems: [] })).toBe(false);
    expect(isEventualRead('GetItem', 'not json')).toBe(false);
    expect(read('GetItem', ['not', 'a', 'request'])).toBe(false);
  });
});

describe('the replica’s bound', () => {
  it('never answers from a state older than the lag, even when reads finished out of order', async () => {
    // DynamoDB Local's stand-in: each read answered with a new version; the first one held.
    let version = 0;
    let releaseFirst = () => {};
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    const upstream = createServer((_req, res) => {
      const answer = String(++version);
      void (answer === '1' ? firstHeld : Promise.resolve()).then(() => res.end(answer));
    });
    const { url } = await listenLocally(upstream);
    let now = 0;
    const lag = new LaggingReads({ lagMs: 1000, now: () => now });
    const edge = createServer((req, res) => {
      void lag.handle(req, res, { name: 'upstream', url }, 'Query');
    });
    const edgeUrl = (await listenLocally(edge)).url;
    onTestFinished(() => {
      upstream.close();
      edge.close();
    });
    const read = (table: string) =>
      fetch(edgeUrl, { method: 'POST', body: JSON.stringify({ TableName: table }) }).then((r) =>
        r.text(),
      );
    // A read of `a` at 0 answers after a read of `b` at 10 did: kept in that order.
    const a = read('a');
    await vi.waitFor(() => expect(version).toBe(1));
    now = 10;
    expect(await read('b')).toBe('2');
    releaseFirst();
    expect(await a).toBe('1');
    // Within the lag both may be answered from the past.
    now = 500;
    expect(await read('a')).toBe('1');
    // Past it for `a` (kept at 0), not for `b` (kept at 10): `a` is read afresh.
    now = 1005;
    expect(await read('b')).toBe('2');
    expect(await read('a')).toBe('3');
    expect(lag.staleAnswers).toBe(2);
  });
});
