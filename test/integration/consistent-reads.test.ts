/**
 * The pipeline on an edge whose eventually consistent reads lag (local/eventual-reads.ts), as
 * DynamoDB's may: every read the guarantees rest on must ask for consistency. A read that does
 * not (the counters an hour is recomputed from, the orders a batch settles against, the ledger)
 * gets the state of its previous identical read here, as a replica not yet caught up would give.
 */
import { describe, expect, it } from 'vitest';
import { useEmulators } from '../support/emulators.ts';
import { expectedHourly, expectedOrders, seedBatches } from '../support/fixtures.ts';
import { apply, batch, DAY, dayIndex, H09, H10, objectOf } from '../support/hours.ts';
import { createPipeline } from '../support/pipeline.ts';

describe('the pipeline when eventually consistent reads lag', () => {
  // Longer than the test: a read that may lag gets the stale answer however slow the machine.
  const lagging = useEmulators({ readLagMs: 10 * 60_000 });

  it('applies and publishes every batch when each is recomputed into hours read just before', async () => {
    const p = await createPipeline({ endpoint: lagging().endpoint });
    const batches = seedBatches();
    // The first delivery crashes before its commit: the ledger, listed, shows it pending; once
    // redelivered, listed again, it no longer does.
    const [first = ''] = batches;
    p.faults.add({ site: 'TransactWriteItems', kind: 'crash-before' });
    expect((await p.ingest([{ body: first, messageId: 'm1' }])).batchItemFailures).toHaveLength(1);
    expect(await p.pendingBatches()).toEqual(['make-orders-1']);
    // One batch at a time, each hour recomputed after each: every read of an order, a claim, a
    // ledger entry or an hour's counters repeats one made before the last write.
    for (const body of batches) {
      await p.deliverUntilDone([body]);
      await p.drainAggregates();
    }
    expect(await p.orders()).toEqual(expectedOrders());
    expect(await p.hourly()).toEqual(expectedHourly());
    expect(await p.verifyHours()).toEqual(expect.objectContaining({ differences: [] }));
    expect(await p.pendingBatches()).toEqual([]);
  });

  it('finalizes hour after hour and amends a final one, listing each in its day’s index', async () => {
    const p = await createPipeline({ endpoint: lagging().endpoint });
    // Each run reads the watermark, its cursor, the marks and the counters again after writes.
    await apply(p, batch('09:10'), batch('12:40'));
    expect((await p.finalize()).finalized.map((f) => f.hour)).toEqual([H09]);
    await apply(p, batch('13:40'));
    expect((await p.finalize()).finalized.map((f) => f.hour)).toEqual([H10]);
    await apply(p, batch('09:55'));
    await apply(p, batch('10:05'));
    expect(await objectOf(p, H09)).toMatchObject({ final: true, amendments: 1, events: 2 });
    expect(await objectOf(p, H10)).toMatchObject({ final: true, amendments: 1, events: 1 });
    await apply(p, batch('14:40'));
    expect((await p.finalize()).finalized.map((f) => f.hour)).toEqual([`${DAY}T11:00:00Z`]);
    expect((await dayIndex(p))?.hours.map((h) => [h.hour, h.events, h.amendments])).toEqual([
      [H09, 2, 1],
      [H10, 1, 1],
      [`${DAY}T11:00:00Z`, 0, 0],
    ]);
    expect(await p.verifyHours()).toEqual(expect.objectContaining({ differences: [] }));
  });
});
