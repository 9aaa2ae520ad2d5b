/**
 * Per-event exactly-once against DynamoDB Local and the edge: an event re-sent in another batch
 * counts once, a conflicting re-send is reported and never applied, and a crash between the
 * claims and the commit leaves each event to the batch that claimed it.
 */
import { describe, expect, it } from 'vitest';
import { touchesLedgerOf } from '../../adapters/dynamo.ts';
import { DynamoOrderStore } from '../../adapters/dynamo-orders.ts';
import { ingestSettings } from '../../adapters/wiring.ts';
import type { GeneratedEvent } from '../../harness/generate.ts';
import { referenceModel } from '../../harness/model.ts';
import { loadIngestConfig } from '../../shared/config.ts';
import { ingestMessage, planBatch } from '../../shared/ingest.ts';
import { validateBatch } from '../../shared/schema.ts';
import { createPipeline, type Pipeline, uniqueName } from '../support/pipeline.ts';

const event = (
  id: string,
  order: string,
  minute: number,
  over: Partial<GeneratedEvent> = {},
): GeneratedEvent => ({
  eventId: id,
  orderId: order,
  customerId: 'C1',
  status: 'placed',
  amount: '10.00',
  currency: 'EUR',
  eventTime: new Date(Date.UTC(2026, 9, 1, 9, minute)).toISOString(),
  ...over,
});

const body = (batchId: string, events: readonly GeneratedEvent[]) =>
  JSON.stringify({ batchId, events });

/** The pipeline's end state equals the model's for these batches, in this order. */
const expectModel = async (
  p: Pipeline,
  batches: { batchId: string; events: GeneratedEvent[] }[],
) => {
  await p.drainAggregates();
  const model = referenceModel(batches);
  expect(await p.orders()).toEqual(model.orders);
  expect(await p.hourly()).toEqual(model.hourly);
  expect(await p.pendingBatches()).toEqual([]);
  expect((await p.verifyHours()).differences).toEqual([]);
  return model;
};

const e1 = event('e1', 'o1', 1);
const e2 = event('e2', 'o1', 2, { status: 'paid' });
const e3 = event('e3', 'o2', 3, { amount: '7.25' });
const e4 = event('e4', 'o3', 4, { currency: 'JPY', amount: '900' });

describe('an event re-sent in another batch', () => {
  it('counts once when a producer re-sends it regrouped under new batch ids', async () => {
    const p = await createPipeline();
    const prefix = uniqueName('rebatch');
    const batches = [
      { batchId: `${prefix}-a`, events: [e1, e2, e3] },
      // A producer that timed out rebuilds its batches: new ids, other groupings.
      { batchId: `${prefix}-b`, events: [e3, e4] },
      { batchId: `${prefix}-c`, events: [e2, { ...e1, amount: '10.0' }] },
    ];
    await p.deliverUntilDone(batches.map((b) => body(b.batchId, b.events)));
    const model = await expectModel(p, batches);
    expect(model.hourly[0]?.events).toBe(4);
    expect(await p.rejects()).toEqual([]);
  });

  it('is reported as an event conflict, never applied, while the rest of its batch applies', async () => {
    const p = await createPipeline();
    const prefix = uniqueName('conflict');
    const first = { batchId: `${prefix}-a`, events: [e1, e2] };
    // e2 again with another amount and a later time: neither its count nor the order's state
    // may take it, however new it looks.
    const second = {
      batchId: `${prefix}-b`,
      events: [{ ...e2, amount: '99.00', eventTime: '2026-10-01T09:59:00Z' }, e3],
    };
    await p.deliverUntilDone([body(first.batchId, first.events)]);
    // Delivered twice (a redelivery): still one report.
    await p.deliverUntilDone([body(second.batchId, second.events)]);
    await p.deliverUntilDone([body(second.batchId, second.events)]);
    const model = await expectModel(p, [first, second]);
    expect(model.conflicts).toBe(1);
    expect((await p.orders()).find((o) => o.orderId === 'o1')?.amount).toBe('10.00');
    const rejects = await p.rejects();
    expect(rejects).toHaveLength(1);
    const [reject] = rejects;
    expect(reject?.reason).toBe('event-conflict');
    expect(reject?.batchId).toBe(second.batchId);
    expect(reject?.detail).toContain('with another amount, eventTime');
    expect(reject?.conflict).toMatchObject({
      orderId: 'o1',
      eventId: 'e2',
      first: { batchId: first.batchId, event: { amount: '10.00', eventTime: e2.eventTime } },
      second: { batchId: second.batchId, event: { amount: '99.00' } },
    });
  });

  it('reports applied with what it counted, skipped and found conflicting', async () => {
    const p = await createPipeline();
    const settings = ingestSettings(loadIngestConfig(p.env));
    const prefix = uniqueName('outcome');
    const send = (batchId: string, events: GeneratedEvent[]) =>
      ingestMessage(
        { messageId: batchId, sentAtMs: Date.now(), body: body(batchId, events) },
        p.ports,
        settings,
      );
    await send(`${prefix}-a`, [e1, e2]);
    const outcome = await send(`${prefix}-b`, [e1, { ...e2, status: 'cancelled' }, e3]);
    expect(outcome).toMatchObject({ kind: 'applied', counted: 1, reclaimed: 1, conflicts: 1 });
  });
});

describe('a crash between the claims and the commit', () => {
  it('leaves each event to the batch that claimed it, when its events arrive in another batch before the redelivery', async () => {
    const p = await createPipeline();
    const prefix = uniqueName('crash');
    const a = { batchId: `${prefix}-a`, events: [e1, e2, e3] };
    const b = { batchId: `${prefix}-b`, events: [e2, e3, e4] };
    // A's claims are written, then its commit crashes.
    p.faults.add({
      site: 'TransactWriteItems',
      kind: 'crash-before',
      when: touchesLedgerOf(a.batchId),
    });
    const crashed = await p.ingest([{ body: body(a.batchId, a.events), messageId: 'a1' }]);
    expect(crashed.batchItemFailures).toEqual([{ itemIdentifier: 'a1' }]);
    expect(await p.pendingBatches()).toEqual([a.batchId]);
    // B arrives first: e2 and e3 are A's, so B counts only e4.
    await p.deliverUntilDone([body(b.batchId, b.events)]);
    await p.drainAggregates();
    expect((await p.hourly())[0]?.events).toBe(1);
    // A's redelivery counts its three claimed events.
    await p.deliverUntilDone([body(a.batchId, a.events)]);
    await expectModel(p, [a, b]);
    expect((await p.hourly())[0]?.events).toBe(4);
  });

  it('counts an event once when a crash split a batch’s claims and another batch took the rest', async () => {
    const p = await createPipeline();
    const prefix = uniqueName('split');
    const a = { batchId: `${prefix}-a`, events: [e1, e3, e4] };
    const b = { batchId: `${prefix}-b`, events: [e4, e3] };
    // A's second order write crashes: some of its orders are settled (claimed), others not.
    p.faults.add({ site: 'UpdateItem:order', kind: 'crash-before', nth: 2 });
    const crashed = await p.ingest([{ body: body(a.batchId, a.events), messageId: 'a1' }]);
    expect(crashed.batchItemFailures).toEqual([{ itemIdentifier: 'a1' }]);
    // B claims whatever A left unclaimed; A's redelivery counts what it had claimed.
    await p.deliverUntilDone([body(b.batchId, b.events)]);
    await p.deliverUntilDone([body(a.batchId, a.events)]);
    await expectModel(p, [a, b]);
    expect((await p.hourly())[0]?.events).toBe(3);
  });
});

describe('claims under a ledger retention', () => {
  const day = 86_400_000;

  it('are dropped once their batch’s ledger entry expired, when their events are refused anyway', async () => {
    const p = await createPipeline({ env: { LEDGER_RETENTION_DAYS: '30' } });
    const start = Date.parse('2026-10-01T12:00:00Z');
    p.setClock(() => start);
    const prefix = uniqueName('expiry');
    const claimsOnOrder = async () =>
      Object.keys((await p.tableItems()).find((i) => i.pk?.S === 'ORDER#o1') ?? {}).filter((n) =>
        n.startsWith('c:'),
      );
    await p.deliverUntilDone([body(`${prefix}-a`, [e1])]);
    expect(await claimsOnOrder()).toHaveLength(1);
    const newEventAt = (id: string, now: number) => {
      p.setClock(() => now);
      return event(id, 'o1', 0, { eventTime: new Date(now - 3_600_000).toISOString() });
    };
    // 30½ days on, the entry has expired but the day of grace for clocks has not passed: the
    // claim stays, beside the new event's.
    const grace = newEventAt('grace', start + 30.5 * day);
    await p.deliverUntilDone([body(`${prefix}-g`, [grace])]);
    expect(await claimsOnOrder()).toHaveLength(2);
    // 32 days on: 30 of retention, the day of grace, one more. A new event of the order is
    // settled, and the write drops the expired claim (the one of 30½ days stands).
    const later = start + 32 * day;
    const recent = newEventAt('recent', later);
    await p.deliverUntilDone([body(`${prefix}-b`, [recent])]);
    expect(await claimsOnOrder()).toHaveLength(2);
    // The old event re-sent is older than the retention: refused, so never counted twice.
    await p.deliverUntilDone([body(`${prefix}-c`, [e1])]);
    const rejects = await p.rejects();
    expect(rejects.map((r) => [r.reason, r.batchId])).toEqual([
      ['beyond-retention', `${prefix}-c`],
    ]);
    await p.drainAggregates();
    expect((await p.hourly()).map((h) => h.events)).toEqual([1, 1, 1]);
  });
});

describe('settling the orders of a batch', () => {
  const planOf = (batchId: string, events: readonly GeneratedEvent[]) => {
    const result = validateBatch(JSON.parse(body(batchId, events)));
    if (!result.ok) throw new Error(result.detail);
    return planBatch(result.batch, { counterShards: 4 });
  };

  it('reads an order again instead of losing its condition when another settle of this process wrote it after the batch read', async () => {
    const p = await createPipeline();
    const orders = ['o1', 'o2', 'o3', 'o4'];
    let reads = 0;
    let writes = 0;
    let lostConditions = 0;
    let newerWritten = () => {};
    const allWritten = new Promise<void>((resolve) => {
      newerWritten = resolve;
    });
    p.clients.dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'BatchGetItemCommand' && ++reads === 2) {
          // The older batch's read is taken at once but answered only after the newer batch has
          // written every order: what it read is stale by then.
          const result = await next(args);
          await allWritten;
          return result;
        }
        try {
          const result = await next(args);
          if (context.commandName === 'UpdateItemCommand' && ++writes === orders.length)
            newerWritten();
          return result;
        } catch (error) {
          if ((error as Error).name === 'ConditionalCheckFailedException') lostConditions++;
          throw error;
        }
      },
      { step: 'initialize', name: 'staleRead' },
    );
    const store = new DynamoOrderStore(p.clients.dynamo, p.tableName);
    const newer = planOf(
      uniqueName('newer'),
      orders.map((o) => event(`${o}-paid`, o, 30, { status: 'paid' })),
    );
    const older = planOf(
      uniqueName('older'),
      orders.map((o) => event(`${o}-placed`, o, 10)),
    );
    const claimant = (batchId: string) => ({
      batchId,
      expiresAtSeconds: undefined,
      nowMs: Date.now(),
    });
    const [first, second] = await Promise.all([
      store.settle(newer.orders, claimant(newer.batch.batchId), 4),
      store.settle(older.orders, claimant(older.batch.batchId), 4),
    ]);
    expect(reads).toBe(2);
    expect(lostConditions).toBe(0);
    // Every event claimed by its own batch; the older events claimed without taking the state.
    expect(first?.flatMap((s) => s.ours.map((e) => e.eventId))).toEqual(
      orders.map((o) => `${o}-paid`),
    );
    expect(second?.flatMap((s) => s.ours.map((e) => e.eventId))).toEqual(
      orders.map((o) => `${o}-placed`),
    );
    expect(second?.filter((s) => s.newState)).toEqual([]);
    expect((await p.orders()).map((o) => [o.orderId, o.status])).toEqual(
      orders.map((o) => [o, 'paid']),
    );
  });
});
