import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { unique } from '../../harness/bench/deliver.ts';
import { startTlsProxy } from '../../harness/bench/tls-proxy.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/emulators.ts';

/** The proxy's certificate comes from openssl, which a machine may lack. */
const openssl = spawnSync('openssl', ['version']).status === 0;
if (!openssl) console.log('openssl is not installed: the TLS proxy test skipped');

const client = (endpoint: string, ca?: Buffer) =>
  new DynamoDBClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    maxAttempts: 1,
    requestHandler: { httpsAgent: new Agent({ keepAlive: true, ...(ca ? { ca } : {}) }) },
  });

describe('the TLS proxy in front of the edge', () => {
  it.skipIf(!openssl)(
    'carries an SDK client’s requests over TLS to the edge, trusted only through its certificate',
    async () => {
      const proxy = await startTlsProxy(inject('endpoint'));
      try {
        expect(proxy.endpoint).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
        const trusted = client(proxy.endpoint, readFileSync(proxy.caFile));
        const table = unique('tls');
        await trusted.send(
          new CreateTableCommand({
            TableName: table,
            KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
            AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
            BillingMode: 'PAY_PER_REQUEST',
          }),
        );
        // The table is the edge's: the same request over plain HTTP finds it.
        const direct = client(inject('endpoint'));
        const found = await direct.send(new DescribeTableCommand({ TableName: table }));
        expect(found.Table?.TableName).toBe(table);
        // Without the certificate the handshake itself fails: the connection is TLS.
        await expect(
          client(proxy.endpoint).send(new DescribeTableCommand({ TableName: table })),
        ).rejects.toThrow(/self-signed certificate/);
        trusted.destroy();
        direct.destroy();
      } finally {
        await proxy.stop();
      }
    },
  );
});
