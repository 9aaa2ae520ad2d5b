import { mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { CreateTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { loopbackLauncher } from '../../local/dynamodb-local.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION, startEmulators } from '../../local/emulators.ts';
import { sharedDynamoLocal } from '../support/emulators.ts';
import { uniqueName } from '../support/pipeline.ts';

/** Whether a TCP connection to host:port is accepted. */
const accepts = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host, port, timeout: 10_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });

const dynamoAt = (endpoint: string) =>
  new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });

describe('DynamoDB Local', () => {
  it('listens on 127.0.0.1 only, through the launcher', async () => {
    const port = Number(new URL(sharedDynamoLocal().endpoint).port);
    const external = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a !== undefined && !a.internal && a.family === 'IPv4')
      .map((a) => a?.address ?? '');
    expect(external.length).toBeGreaterThan(0);
    expect(await accepts('127.0.0.1', port)).toBe(true);
    for (const address of external) expect(await accepts(address, port)).toBe(false);
  });

  it('compiles the launcher once per source, whoever asks at the same time, and then reuses it', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'onceflow-launcher-'));
    const first = await Promise.all([loopbackLauncher(cache), loopbackLauncher(cache)]);
    expect(first[0]?.main).toBe('LoopbackDynamoDB');
    expect(first[1]).toEqual(first[0]);
    const dir = first[0]?.classPath[0] ?? '';
    // Nothing half-built is left beside it, whichever rename won.
    expect(readdirSync(cache)).toEqual([basename(dir)]);
    const compiledAt = statSync(join(dir, 'LoopbackDynamoDB.class')).mtimeMs;
    expect(await loopbackLauncher(cache)).toEqual(first[0]);
    expect(statSync(join(dir, 'LoopbackDynamoDB.class')).mtimeMs).toBe(compiledAt);
  });

  it('runs the launcher from its source when the cache cannot be written', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'onceflow-launcher-')), 'a-file');
    writeFileSync(file, '');
    const launcher = await loopbackLauncher(join(file, 'cache'));
    expect(launcher).toEqual({
      classPath: [],
      main: expect.stringMatching(/LoopbackDynamoDB\.java$/),
    });
  });
});

describe('emulators on a running DynamoDB Local', () => {
  it('serve its tables through their edge and leave it running when they stop', async () => {
    const shared = sharedDynamoLocal();
    const emulators = await startEmulators({ dynamoLocal: shared });
    expect(emulators.dynamoLocal).toEqual(shared);
    const TableName = uniqueName('shared');
    const viaEdge = dynamoAt(emulators.endpoint);
    await viaEdge.send(
      new CreateTableCommand({
        TableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      }),
    );
    viaEdge.destroy();
    await emulators.stop();

    const direct = dynamoAt(shared.endpoint);
    const tables: string[] = [];
    let ExclusiveStartTableName: string | undefined;
    do {
      const page = await direct.send(new ListTablesCommand({ ExclusiveStartTableName }));
      tables.push(...(page.TableNames ?? []));
      ExclusiveStartTableName = page.LastEvaluatedTableName;
    } while (ExclusiveStartTableName);
    direct.destroy();
    expect(tables).toContain(TableName);
  });

  it('refuse to keep data in a directory on a DynamoDB Local they do not own', async () => {
    await expect(
      startEmulators({
        dynamoLocal: sharedDynamoLocal(),
        dataDir: mkdtempSync(join(tmpdir(), 'onceflow-data-')),
      }),
    ).rejects.toThrow(/needs a DynamoDB Local of its own/);
  });
});
