import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { S3Store } from '../../adapters/s3.ts';
import { readRejects } from '../../adapters/s3-quarantine.ts';
import { seedBatches } from '../support/fixtures.ts';
import { parseBatch } from '../support/json.ts';
import { mostInFlight } from '../support/overlap.ts';
import { createPipeline } from '../support/pipeline.ts';
import { useRuntimePipelines } from '../support/runtime-pipeline.ts';

const throughRuntime = useRuntimePipelines();

const good = (batchId: string) =>
  JSON.stringify({
    batchId,
    events: [
      {
        eventId: `e-${batchId}`,
        orderId: batchId,
        customerId: 'C1',
        status: 'paid',
        amount: '7.00',
        currency: 'EUR',
        eventTime: '2026-10-01T08:15:00Z',
      },
    ],
  });

const withEvent = (change: Record<string, unknown>) =>
  JSON.stringify({
    batchId: 'bad-1',
    events: [
      {
        eventId: 'e-1',
        orderId: 'o-1',
        customerId: 'C1',
        status: 'placed',
        amount: '1.00',
        currency: 'USD',
        eventTime: '2026-10-01T08:00:00Z',
        ...change,
      },
    ],
  });

describe.each([
  ['invoked directly', createPipeline],
  ['invoked through the local runtime', throughRuntime],
])('invalid input, %s', (_, createPipeline) => {
  // The batch id each reject names: one the body names validly, even though the body is refused
  // (never read from a body that is not JSON or too large to parse, nor an id the contract bans).
  it.each<[string, string, string, string | undefined]>([
    ['a body that is not JSON', '{"batchId": "x", ', 'invalid-json', undefined],
    ['an empty body', '', 'invalid-json', undefined],
    ['a schema violation', withEvent({ status: 'lost' }), 'schema-violation', 'bad-1'],
    ['a number as amount', withEvent({ amount: 1 }), 'schema-violation', 'bad-1'],
    [
      'a time without offset',
      withEvent({ eventTime: '2026-10-01T08:00:00' }),
      'schema-violation',
      'bad-1',
    ],
    [
      'a batch id the contract bans',
      JSON.stringify({ batchId: 'a b', events: [] }),
      'schema-violation',
      undefined,
    ],
    [
      'two events with one id',
      JSON.stringify({
        batchId: 'dup',
        events: [parseBatch(withEvent({})).events[0], parseBatch(withEvent({})).events[0]],
      }),
      'duplicate-event-id',
      'dup',
    ],
    [
      'a body over the size limit',
      JSON.stringify({ batchId: 'big', padding: 'x'.repeat(1024 * 1024) }),
      'oversize',
      undefined,
    ],
  ])(
    'quarantines %s with its reason and applies its neighbours',
    async (_, body, reason, batchId) => {
      const p = await createPipeline();
      const badId = randomUUID();
      const res = await p.ingest([
        { body: good('n-1') },
        { body, messageId: badId },
        { body: good('n-2') },
      ]);
      expect(res.batchItemFailures).toEqual([]);
      const rejects = await p.rejects();
      expect(rejects).toHaveLength(1);
      expect(rejects[0]).toMatchObject({ reason, messageId: badId, body, source: 'ingest' });
      expect(rejects[0]?.batchId).toBe(batchId);
      expect(rejects[0]?.detail).toBeTruthy();
      expect((await p.orders()).map((o) => o.orderId)).toEqual(['n-1', 'n-2']);
      // Nothing of the invalid message reached the table: only the neighbours' items exist.
      expect(
        (await p.tableItems())
          .map((i) => i.pk?.S)
          .filter((pk) => pk?.includes('bad') || pk?.includes('dup')),
      ).toEqual([]);
    },
  );

  it('quarantines an invalid aggregate message and keeps publishing the valid ones', async () => {
    const p = await createPipeline();
    await p.deliverUntilDone(seedBatches().slice(0, 1));
    await p.sendToAggregateQueue('{"hour":"2026-10-01T09:30:00Z"}');
    await p.drainAggregates();
    expect((await p.hourly()).map((h) => h.hour)).toEqual(['2026-10-01T09:00:00Z']);
    const [reject] = await p.rejects();
    expect(reject).toMatchObject({ source: 'aggregate', reason: 'schema-violation' });
  });
});

describe('ledger retention', () => {
  const day = 86_400_000;

  it('stamps ledger entries with an expiry after the batch’s newest event plus the retention', async () => {
    const p = await createPipeline({ env: { LEDGER_RETENTION_DAYS: '30' } });
    const now = Date.parse('2026-10-02T00:00:00Z');
    p.setClock(() => now);
    await p.deliverUntilDone(seedBatches());
    const ledger = (await p.tableItems()).filter((i) => i.pk?.S?.startsWith('BATCH#'));
    expect(ledger).toHaveLength(4);
    for (const item of ledger) expect(Number(item.expiresAt?.N)).toBe((now + 30 * day) / 1000);
  });

  it('stamps the entry of a batch of future events from its newest event, not from now', async () => {
    const p = await createPipeline({ env: { LEDGER_RETENTION_DAYS: '30' } });
    // A producer's clock a day ahead: the entry must outlive the last moment a copy is accepted.
    p.setClock(() => Date.parse('2026-09-30T00:00:00Z'));
    const batch = seedBatches()[0] ?? '';
    await p.deliverUntilDone([batch]);
    const newest = Math.max(...parseBatch(batch).events.map((e) => Date.parse(e.eventTime)));
    const [entry] = (await p.tableItems()).filter((i) => i.pk?.S?.startsWith('BATCH#'));
    expect(Number(entry?.expiresAt?.N)).toBe(Math.ceil((newest + 30 * day) / 1000));
  });

  it('refuses a batch older than the retention instead of risking a second application', async () => {
    const p = await createPipeline({ env: { LEDGER_RETENTION_DAYS: '30' } });
    p.setClock(() => Date.parse('2026-10-01T00:00:00Z') + 31 * day);
    await p.deliverUntilDone(seedBatches().slice(0, 1));
    expect(await p.orders()).toEqual([]);
    expect(await p.tableItems()).toEqual([]);
    const [reject] = await p.rejects();
    expect(reject).toMatchObject({ reason: 'beyond-retention', batchId: 'make-orders-1' });
  });

  it('keeps ledger entries without expiry when no retention is configured', async () => {
    const p = await createPipeline();
    await p.deliverUntilDone(seedBatches());
    const ledger = (await p.tableItems()).filter((i) => i.pk?.S?.startsWith('BATCH#'));
    expect(ledger.every((i) => i.expiresAt === undefined)).toBe(true);
  });
});

describe('reading the quarantine back', () => {
  it('reads every reject of a large quarantine with at most 32 requests in flight', async () => {
    const p = await createPipeline();
    const bodies = Array.from({ length: 200 }, (_, i) => `not json ${i}`);
    for (let i = 0; i < bodies.length; i += 10)
      await p.ingest(bodies.slice(i, i + 10).map((body) => ({ body })));
    const from = p.faults.trace.length;
    const rejects = await readRejects(new S3Store(p.clients.s3, p.bucketName));
    expect(rejects.map((r) => r.body).sort()).toEqual([...bodies].sort());
    // Several at a time, never more than the bound: the SDK's 50 sockets are never exhausted.
    const most = mostInFlight(p.faults.trace.slice(from), 'GetObject:rejects');
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(32);
  });
});
