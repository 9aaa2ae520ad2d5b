import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { DynamoOrderReader } from '../../adapters/dynamo-order-reader.ts';
import { S3Store } from '../../adapters/s3.ts';
import { runDemo } from '../../local/demo.ts';
import { type CrashRule, type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { sharedDynamoLocal } from '../support/emulators.ts';
import { placedEvent } from '../support/hours.ts';
import { uniqueName } from '../support/pipeline.ts';
import { scenario } from './scenario.ts';
import { deployedPipelineSuite } from './suite.ts';

let runtime: LocalRuntime;

beforeAll(async () => {
  const { assemblyDir, stackName } = inject('assembly');
  // Failed messages come back after a second instead of the 3-minute visibility timeout.
  runtime = await startLocalRuntime({
    assemblyDir,
    stackName,
    localStackName: uniqueName('deployed'),
    dynamoLocal: sharedDynamoLocal(),
    retryDelaySeconds: 1,
  });
});
afterAll(async () => {
  await runtime?.stop();
});

deployedPipelineSuite('local runtime', () => ({
  clients: runtime.clients,
  outputs: runtime.stack.outputs,
  drain: () => runtime.drain({ timeoutMs: DEADLINE_MS }),
}));

describe('the local runtime', () => {
  it('runs the bundled code from the cloud assembly in its own environments', () => {
    const mapped = runtime.stack.mappings.map((m) =>
      runtime.stack.functions.find((f) => f.logicalId === m.functionLogicalId),
    );
    expect(mapped).toHaveLength(2);
    for (const fn of mapped) expect(fn?.handlerFile).toMatch(/asset\.[0-9a-f]{64}\/index\.mjs$/);
    expect(runtime.environments.some((e) => e.coldStarts > 0)).toBe(true);
  });

  it('keeps reusing one warm environment when messages arrive one at a time', async () => {
    // A runtime of its own: the suite's runtime has run concurrent batches in many environments.
    const { assemblyDir, stackName } = inject('assembly');
    const own = await startLocalRuntime({
      assemblyDir,
      stackName,
      emulators: runtime.emulators,
      localStackName: uniqueName('warm'),
    });
    try {
      const ingest = own.stack.functions.find((f) => f.name.includes('IngestOrders'));
      const mapping = own.stack.mappings.find((m) => m.functionLogicalId === ingest?.logicalId);
      expect(mapping?.maxConcurrency).toBeGreaterThan(1);
      for (const MessageBody of scenario().batches.slice(0, 4)) {
        await own.clients.sqs.send(
          new SendMessageCommand({ QueueUrl: own.stack.outputs.OrdersQueueUrl, MessageBody }),
        );
        await own.drain({ timeoutMs: DEADLINE_MS });
      }
      // Lambda reuses an idle environment before it starts another: four messages, one at a
      // time, make one cold start, however many concurrent invocations the mapping allows.
      const used = own.environments.filter((e) => e.fn === ingest && e.coldStarts > 0);
      expect(used.map((e) => e.coldStarts)).toEqual([1]);
    } finally {
      await own.stop();
    }
  });

  const crashes: [string, CrashRule][] = [
    [
      'after the ledger claim',
      { phase: 'after', when: (c, f) => c.action === 'PutItem' && f.name.includes('Ingest') },
    ],
    ['before the commit', { phase: 'before', when: (c) => c.action === 'TransactWriteItems' }],
    ['after the commit', { phase: 'after', when: (c) => c.action === 'TransactWriteItems' }],
    ['after notifying the hours', { phase: 'after', when: (c) => c.action === 'SendMessageBatch' }],
    [
      'after the aggregator’s S3 write',
      {
        phase: 'after',
        when: (c) => c.action === 'PutObject' && (c.key ?? '').startsWith('aggregates/'),
      },
    ],
  ];
  it.each(crashes)('converges when an environment crashes %s', async (_, rule) => {
    const s = scenario();
    const before = runtime.crashes.length;
    runtime.addCrash(rule);
    const { clients } = runtime;
    const { outputs } = runtime.stack;
    await clients.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: outputs.OrdersQueueUrl,
        Entries: s.batches.map((MessageBody, i) => ({ Id: String(i), MessageBody })),
      }),
    );
    await runtime.drain({ timeoutMs: DEADLINE_MS });
    expect(runtime.crashes.length).toBe(before + 1);
    const orders = s.own.orders(
      await new DynamoOrderReader(clients.dynamo, outputs.TableName ?? '').listOrders(),
    );
    const hours = s.own.hours(
      await new S3Store(clients.s3, outputs.BucketName ?? '').listAggregates(),
    );
    expect({ orders, hours }).toEqual({ orders: s.expectedOrders, hours: s.expectedHourly });
  });
});

describe('npm start', () => {
  /** A fresh copy of the stack for the demo, stopped when the test ends. */
  const startDemoRuntime = async (name: string) => {
    const { assemblyDir, stackName } = inject('assembly');
    const runtime = await startLocalRuntime({
      assemblyDir,
      stackName,
      localStackName: uniqueName(name),
      dynamoLocal: sharedDynamoLocal(),
      retryDelaySeconds: 1,
    });
    onTestFinished(() => runtime.stop());
    return runtime;
  };

  it('prints the orders, the hourly aggregates and a chart equal to the expected results', async () => {
    const demoRuntime = await startDemoRuntime('demo');
    const printed: string[] = [];
    const result = await runDemo(demoRuntime, { print: (t) => printed.push(t) });
    const text = printed.join('\n');
    expect(result.differences).toEqual([]);
    expect(result.ok).toBe(true);
    expect(text).toMatch(/crashes injected: after:TransactWriteItems@/);
    expect(text).toMatch(/1001 .* paid .* 25\.50 .* USD/);
    expect(text).toMatch(/2026-10-01T09:00:00Z .* 4 .* placed .* 4 .* 90\.50 USD/);
    expect(text).toMatch(/2026-10-01 09h │█{40} 4/);
    expect(text).toContain('✔ orders and hourly aggregates equal the expected results');
  });

  it('says what differs from the expected results when the stack held another order and another crash fired', async () => {
    const demoRuntime = await startDemoRuntime('demo-other');
    const ingestCommit: CrashRule['when'] = (call, fn) =>
      call.action === 'TransactWriteItems' && fn.environment.AGGREGATE_QUEUE_URL !== undefined;
    // A crash before the demo is not the demo's: it must not count.
    demoRuntime.addCrash({ phase: 'after', when: ingestCommit });
    // Sent before the demo, as with `npm start -- --persist` after batches of one's own.
    await demoRuntime.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: demoRuntime.stack.outputs.OrdersQueueUrl,
        MessageBody: JSON.stringify({
          batchId: uniqueName('other'),
          events: [{ ...placedEvent(uniqueName('o-other')), eventTime: '2026-10-01T09:20:00Z' }],
        }),
      }),
    );
    await demoRuntime.drain({ timeoutMs: DEADLINE_MS });
    expect(demoRuntime.crashes).toHaveLength(1);
    // One more crash during the demo, beside the demo's own: the demo must not take it for its own.
    demoRuntime.addCrash({ phase: 'before', when: ingestCommit });
    const printed: string[] = [];
    const result = await runDemo(demoRuntime, { print: (t) => printed.push(t) });
    expect(result.ok).toBe(false);
    expect(result.differences).toEqual([
      'orders differ from expected-orders.json',
      'hourly aggregates differ from expected-hourly.json',
      expect.stringMatching(
        /^expected one injected crash, saw 2: (before|after):TransactWriteItems@\S+, (before|after):TransactWriteItems@\S+$/,
      ),
    ]);
    expect(printed.join('\n')).toContain(
      '✘ orders differ from expected-orders.json; hourly aggregates differ from expected-hourly.json; expected one injected crash, saw 2',
    );
  });
});
