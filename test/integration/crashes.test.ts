import { describe, expect, it } from 'vitest';
import { type FaultKind, SIDE_EFFECT_SITES } from '../../harness/faults.ts';
import { expectedHourly, expectedOrders, seedBatches } from '../support/fixtures.ts';
import { createPipeline, type Pipeline } from '../support/pipeline.ts';

/** Everything the pipeline leaves behind, minus the wall-clock bookkeeping. */
const endState = async (p: Pipeline) => ({
  items: await p.tableItems(),
  hours: (await p.hourObjects()).map(({ key, body }) => ({
    key,
    body: { ...body, computedAt: undefined },
  })),
  raw: await p.listKeys('raw/'),
  arrivals: await p.listKeys('arrivals/'),
  rejects: await p.rejects(),
});

/** Both runs on one clock, so the ledger's `receivedAt` and the arrival index compare equal. */
const RECEIVED_AT = Date.parse('2026-10-02T08:30:00Z');
const pipelineOnFixedClock = async () => {
  const p = await createPipeline();
  p.setClock(() => RECEIVED_AT);
  return p;
};

const cleanRun = async () => {
  const p = await pipelineOnFixedClock();
  await p.deliverUntilDone(seedBatches());
  await p.drainAggregates();
  return endState(p);
};

// Each case runs on its own copy of the stack; running several at once overlaps the aggregate
// queue's delay (the coalescing window) instead of waiting it out case after case.
describe.concurrent('a crash at any side-effecting call, followed by redelivery', () => {
  // Every ingest call site (the quarantine write has its own test below).
  const ingestSites = SIDE_EFFECT_SITES.filter(
    (site) => !site.endsWith(':aggregates') && site !== 'PutObject:rejects',
  );
  const cases = ingestSites.flatMap((site) =>
    (['crash-before', 'crash-after'] as FaultKind[]).flatMap((kind) =>
      [1, 3].map((nth) => ({ site, kind, nth })),
    ),
  );

  it.each(cases)(
    'ends in the clean run’s state when ingest has $kind at call $nth of $site',
    async ({ site, kind, nth }) => {
      const expected = await cleanRun();
      const p = await pipelineOnFixedClock();
      p.faults.add({ site, kind, nth });
      await p.deliverUntilDone(seedBatches());
      await p.drainAggregates();
      expect(p.faults.fired).toEqual([`${kind}@${site}`]);
      expect(await endState(p)).toEqual(expected);
      expect(await p.orders()).toEqual(expectedOrders());
      expect(await p.hourly()).toEqual(expectedHourly());
    },
  );

  it.each(['crash-before', 'crash-after'] as FaultKind[])(
    'publishes every hour correctly when the aggregator has %s at its S3 write',
    async (kind) => {
      const p = await createPipeline();
      p.faults.add({ site: 'PutObject:aggregates', kind, nth: 2 });
      await p.deliverUntilDone(seedBatches());
      await p.drainAggregates();
      expect(p.faults.fired).toEqual([`${kind}@PutObject:aggregates`]);
      expect(await p.hourly()).toEqual(expectedHourly());
    },
  );

  it('does no physical S3 write when a recompute after a crash finds the hour already published', async () => {
    const p = await createPipeline();
    await p.deliverUntilDone(seedBatches());
    p.faults.add({ site: 'PutObject:aggregates', kind: 'crash-after', nth: 1, times: 1 });
    await p.drainAggregates();
    // Four hours, four writes: the retried hour found its object already current.
    expect(p.faults.calls.get('PutObject:aggregates')).toBe(4);
  });

  it.each(['crash-before', 'crash-after'] as FaultKind[])(
    'deletes an hour object without events once when the delete has %s',
    async (kind) => {
      const p = await createPipeline();
      await p.deliverUntilDone(seedBatches());
      await p.drainAggregates();
      const emptyHour = '2026-10-01T15:00:00Z';
      await p.ports.archive.putOnce(
        'aggregates/hourly/date=2026-10-01/hour=15.json',
        JSON.stringify({ hour: emptyHour, events: 1, byStatus: {}, revision: 1 }),
      );
      p.faults.add({ site: 'DeleteObject:aggregates', kind });
      await p.sendToAggregateQueue(JSON.stringify({ hour: emptyHour }));
      await p.drainAggregates();
      expect(p.faults.fired).toEqual([`${kind}@DeleteObject:aggregates`]);
      expect(await p.hourly()).toEqual(expectedHourly());
    },
  );

  it.each(['crash-before', 'crash-after'] as FaultKind[])(
    'quarantines an invalid message once when the quarantine write has %s',
    async (kind) => {
      const p = await createPipeline();
      p.faults.add({ site: 'PutObject:rejects', kind });
      await p.deliverUntilDone(['{"not":"a batch"}']);
      expect(p.faults.fired).toEqual([`${kind}@PutObject:rejects`]);
      const rejects = await p.rejects();
      expect(rejects).toHaveLength(1);
      expect(rejects[0]?.reason).toBe('schema-violation');
    },
  );

  it('completes a batch split into several transactions when it crashes between two of them', async () => {
    const p = await createPipeline();
    const events = Array.from({ length: 120 }, (_, i) => ({
      eventId: `e${i}`,
      orderId: `o${i}`,
      customerId: 'C',
      status: 'placed',
      amount: '1.25',
      currency: 'EUR',
      eventTime: new Date(Date.UTC(2026, 9, 1) + i * 3_600_000).toISOString(),
    }));
    const body = JSON.stringify({ batchId: 'wide-batch', events });
    p.faults.add({ site: 'TransactWriteItems', kind: 'crash-after', nth: 1 });
    await p.deliverUntilDone([body, body]);
    await p.drainAggregates();
    const hours = await p.hourly();
    expect(hours).toHaveLength(120);
    expect(hours.every((h) => h.events === 1 && h.byStatus.placed?.amounts.EUR === '1.25')).toBe(
      true,
    );
    expect(p.faults.calls.get('TransactWriteItems')).toBe(2);
  });
});
