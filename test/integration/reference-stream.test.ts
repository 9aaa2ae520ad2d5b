import { describe, expect, it } from 'vitest';
import { expectedHourly, expectedOrders, seedBatches } from '../support/fixtures.ts';
import { createPipeline } from '../support/pipeline.ts';
import { useRuntimePipelines } from '../support/runtime-pipeline.ts';

const throughRuntime = useRuntimePipelines();

describe.each([
  ['invoked directly', createPipeline],
  ['invoked through the local runtime', throughRuntime],
])('the reference stream, %s', (_, createPipeline) => {
  it('ends with the expected orders and hourly aggregates when each batch is delivered once', async () => {
    const p = await createPipeline();
    await p.deliverUntilDone(seedBatches());
    await p.drainAggregates();
    expect(await p.orders()).toEqual(expectedOrders());
    expect(await p.hourly()).toEqual(expectedHourly());
  });

  it('ends in the same state when every batch is delivered twice and in reverse order', async () => {
    const p = await createPipeline();
    const batches = seedBatches();
    await p.deliverUntilDone([...batches].reverse());
    await p.deliverUntilDone([...batches].reverse());
    await p.drainAggregates();
    expect(await p.orders()).toEqual(expectedOrders());
    expect(await p.hourly()).toEqual(expectedHourly());
  });

  it('applies every batch of one SQS batch when they arrive together with their duplicates', async () => {
    const p = await createPipeline();
    const batches = seedBatches();
    const res = await p.ingest([...batches, ...batches].map((body) => ({ body })));
    expect(res.batchItemFailures).toEqual([]);
    await p.drainAggregates();
    expect(await p.orders()).toEqual(expectedOrders());
    expect(await p.hourly()).toEqual(expectedHourly());
  });

  it('archives each accepted batch once under raw/ and leaves nothing in rejects/', async () => {
    const p = await createPipeline();
    await p.deliverUntilDone([...seedBatches(), ...seedBatches()]);
    expect(await p.listKeys('raw/')).toEqual([
      'raw/date=2026-10-01/hour=09/make-orders-1.json',
      'raw/date=2026-10-01/hour=09/make-orders-3.json',
      'raw/date=2026-10-01/hour=10/make-orders-2.json',
      'raw/date=2026-10-01/hour=12/make-orders-4.json',
    ]);
    expect(await p.rejects()).toEqual([]);
  });
});
