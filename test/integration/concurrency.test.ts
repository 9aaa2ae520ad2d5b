import { randomUUID } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { aggregatorPorts } from '../../adapters/wiring.ts';
import { publishHour } from '../../shared/aggregator.ts';
import { loadAggregateConfig } from '../../shared/config.ts';
import { expectedHourly, expectedOrders, seedBatches } from '../support/fixtures.ts';
import { clientConfig, createPipeline, gate, heldS3Clients } from '../support/pipeline.ts';
import { useRuntimePipelines } from '../support/runtime-pipeline.ts';

const throughRuntime = useRuntimePipelines();

const batchWith = (batchId: string, amount: string, orderId = '9001') =>
  JSON.stringify({
    batchId,
    events: [
      {
        eventId: `e-${orderId}`,
        orderId,
        customerId: 'C9',
        status: 'placed',
        amount,
        currency: 'USD',
        eventTime: '2026-10-01T09:30:00Z',
      },
    ],
  });

describe.each([
  ['invoked directly', createPipeline],
  ['invoked through the local runtime', throughRuntime],
])('concurrent and conflicting deliveries, %s', (_, createPipeline) => {
  it('applies a batch once when two invocations deliver it at the same time', async () => {
    const p = await createPipeline();
    for (const body of seedBatches()) {
      const results = await Promise.all([
        p.ingest([{ body }]),
        p.ingest([{ body }]),
        p.ingest([{ body }]),
      ]);
      expect(results.flatMap((r) => r.batchItemFailures)).toEqual([]);
    }
    await p.drainAggregates();
    expect(await p.orders()).toEqual(expectedOrders());
    expect(await p.hourly()).toEqual(expectedHourly());
  });

  it('applies exactly one content and quarantines the other when a reused batch id races the original', async () => {
    for (let round = 0; round < 5; round++) {
      const p = await createPipeline();
      const original = batchWith('shared-id', '10.00', '9001');
      const impostor = batchWith('shared-id', '99.00', '9002');
      const results = await Promise.all([
        p.ingest([{ body: original }]),
        p.ingest([{ body: impostor }]),
      ]);
      expect(results.flatMap((r) => r.batchItemFailures)).toEqual([]);
      await p.drainAggregates();
      const orders = await p.orders();
      const hours = await p.hourly();
      const rejects = await p.rejects();
      expect(orders).toHaveLength(1);
      expect(rejects).toHaveLength(1);
      expect(rejects[0]?.reason).toBe('batch-conflict');
      const winner = orders[0]?.orderId === '9001' ? '10.00' : '99.00';
      expect(hours).toEqual([
        {
          hour: '2026-10-01T09:00:00Z',
          events: 1,
          byStatus: { placed: { events: 1, amounts: { USD: winner } } },
        },
      ]);
      expect(rejects[0]?.body).toBe(winner === '10.00' ? impostor : original);
    }
  });

  it('quarantines a reused batch id with other content after the original was applied, changing nothing', async () => {
    const p = await createPipeline();
    await p.deliverUntilDone(seedBatches());
    await p.drainAggregates();
    const before = await p.tableItems();
    const reused = batchWith('make-orders-1', '1.00', '1001');
    await p.deliverUntilDone([reused]);
    await p.drainAggregates();
    expect(await p.tableItems()).toEqual(before);
    expect(await p.hourly()).toEqual(expectedHourly());
    const [reject] = await p.rejects();
    expect(reject).toMatchObject({
      reason: 'batch-conflict',
      batchId: 'make-orders-1',
      body: reused,
    });
    expect(reject?.detail).toMatch(/digest/);
  });
});

describe('transient failures', () => {
  it.each([
    ['throttling on an order write', 'UpdateItem:order', 'throttle', 1],
    ['throttling on the ledger claim', 'PutItem:batch', 'throttle', 1],
    // The ledger tries a conflicting commit four times before it gives the message up.
    [
      'a transaction conflict on every attempt of the commit',
      'TransactWriteItems',
      'transaction-conflict',
      4,
    ],
  ] as const)(
    'fails only the affected message on %s, and its retry converges',
    async (_, site, kind, times) => {
      const p = await createPipeline();
      const bodies = seedBatches();
      const ids = bodies.map(() => randomUUID());
      // Only the third batch's calls are affected.
      p.faults.add({
        site,
        kind,
        times,
        when: (input) => JSON.stringify(input).includes('make-orders-3'),
      });
      const first = await p.ingest(bodies.map((body, i) => ({ body, messageId: ids[i] })));
      expect(first.batchItemFailures).toEqual([{ itemIdentifier: ids[2] }]);
      const retry = await p.ingest([{ body: bodies[2] ?? '', messageId: ids[2], receiveCount: 2 }]);
      expect(retry.batchItemFailures).toEqual([]);
      await p.drainAggregates();
      expect(await p.orders()).toEqual(expectedOrders());
      expect(await p.hourly()).toEqual(expectedHourly());
    },
  );

  it('applies the batch in the same delivery when its commit meets transaction conflicts', async () => {
    const p = await createPipeline();
    const bodies = seedBatches();
    p.faults.add({
      site: 'TransactWriteItems',
      kind: 'transaction-conflict',
      times: 3,
      when: (input) => JSON.stringify(input).includes('make-orders-3'),
    });
    const result = await p.ingest(bodies.map((body) => ({ body, messageId: randomUUID() })));
    expect(result.batchItemFailures).toEqual([]);
    expect(p.faults.fired).toEqual(Array(3).fill('transaction-conflict@TransactWriteItems'));
    expect(await p.ledgerBatches()).toMatchObject({ pending: [] });
    await p.drainAggregates();
    expect(await p.orders()).toEqual(expectedOrders());
    expect(await p.hourly()).toEqual(expectedHourly());
  });

  it('publishes every hour when SQS fails hour notifications on its side, in the same delivery', async () => {
    const p = await createPipeline();
    const bodies = seedBatches();
    // The first time an hour is notified, SQS fails that entry; the notifier sends it again.
    const failedOnce = new Set<string>();
    p.faults.add({
      site: 'SendMessageBatch',
      kind: 'entry-failure',
      times: Number.POSITIVE_INFINITY,
      when: (input) => {
        const first = (input as { Entries?: { MessageBody?: string }[] }).Entries?.[0]?.MessageBody;
        if (first === undefined || failedOnce.has(first)) return false;
        failedOnce.add(first);
        return true;
      },
    });
    const result = await p.ingest(bodies.map((body) => ({ body, messageId: randomUUID() })));
    expect(result.batchItemFailures).toEqual([]);
    expect(p.faults.fired.length).toBeGreaterThan(0);
    await p.drainAggregates();
    expect(await p.hourly()).toEqual(expectedHourly());
  });
});

describe('an aggregator run during a slow commit', () => {
  it('publishes the batch when the aggregate queue is drained while its commit is held', async () => {
    // Notified before its commit, the hour would be recomputed without the batch, and nothing
    // would notify it again.
    const p = await createPipeline();
    const commit = gate();
    p.faults.add({ site: 'TransactWriteItems', kind: 'hold', release: commit.opened });
    const reachedCommit = p.faults.nextCall('TransactWriteItems');
    const delivering = p.deliverUntilDone([batchWith('slow-commit', '5.00')]);
    await reachedCommit;
    await p.drainAggregates();
    expect(await p.hourly()).toEqual([]);

    commit.open();
    await delivering;
    await p.drainAggregates();
    expect(await p.hourly()).toEqual([
      {
        hour: '2026-10-01T09:00:00Z',
        events: 1,
        byStatus: { placed: { events: 1, amounts: { USD: '5.00' } } },
      },
    ]);
  });
});

describe('two aggregator runs for the same hour', () => {
  const hour = '2026-10-01T09:00:00Z';

  it.each([
    ['no object exists yet', false],
    ['an older object exists', true],
  ])('keeps the newer result when the older run finishes last and %s', async (_, publishFirst) => {
    const p = await createPipeline();
    const [b1, , b3] = seedBatches();
    const config = loadAggregateConfig(p.env);
    const later = [b3 ?? '', batchWith('extra-09', '5.00', '9009')];
    await p.deliverUntilDone([b1 ?? '']);
    if (publishFirst) {
      await publishHour(hour, aggregatorPorts(config, p.clients));
      await p.deliverUntilDone([later.shift() ?? '']);
    }

    // The slow run reads the object and the counters, then stalls before its write.
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let stalled = () => {};
    const reachedWrite = new Promise<void>((resolve) => {
      stalled = resolve;
    });
    const slowClients = {
      ...p.clients,
      s3: new S3Client({ ...clientConfig(), forcePathStyle: true }),
    };
    slowClients.s3.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'PutObjectCommand') {
          stalled();
          await gate;
        }
        return next(args);
      },
      { step: 'initialize', name: 'stall' },
    );
    const slow = publishHour(hour, aggregatorPorts(config, slowClients));
    await reachedWrite;

    // Meanwhile a newer batch lands and a faster run publishes it.
    await p.deliverUntilDone([later.shift() ?? '']);
    const fast = await publishHour(hour, aggregatorPorts(config, p.clients));
    expect(fast.kind).toBe('written');
    release();
    expect((await slow).kind).toBe('unchanged');

    const [object] = await p.hourObjects();
    expect(object?.body).toMatchObject(
      publishFirst ? { hour, events: 5, revision: 3 } : { hour, events: 4, revision: 2 },
    );
  });

  it('keeps the newer result when the older run is slow to read the object', async () => {
    // The object's ETag must be read before the counters: a run that read its counters first
    // and the object after a newer publication would write older counters over it.
    const p = await createPipeline();
    const [b1, , b3] = seedBatches();
    const config = loadAggregateConfig(p.env);
    await p.deliverUntilDone([b1 ?? '']);
    await publishHour(hour, aggregatorPorts(config, p.clients));

    const held = heldS3Clients(p, 'GetObject:aggregates');
    const slow = publishHour(hour, aggregatorPorts(config, held.clients));
    await held.reached;

    await p.deliverUntilDone([b3 ?? '']);
    expect((await publishHour(hour, aggregatorPorts(config, p.clients))).kind).toBe('written');
    held.release();
    expect((await slow).kind).toBe('unchanged');

    const [object] = await p.hourObjects();
    expect(object?.body).toMatchObject({ hour, events: 4, revision: 2 });
  });

  it('deletes the object of an hour that has no events (after a restore), and only that one', async () => {
    const p = await createPipeline();
    await p.deliverUntilDone(seedBatches());
    await p.drainAggregates();
    const ports = aggregatorPorts(loadAggregateConfig(p.env), p.clients);
    const emptyHour = '2026-10-01T15:00:00Z';
    await ports.objects.putIfUnchanged(
      emptyHour,
      { hour: emptyHour, events: 3, byStatus: {}, revision: 9, computedAt: 'x' },
      undefined,
    );
    expect((await publishHour(emptyHour, ports)).kind).toBe('deleted');
    expect(await p.hourly()).toEqual(expectedHourly());
  });
});
