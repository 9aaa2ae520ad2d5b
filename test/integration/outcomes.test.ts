/**
 * What a delivery reports and what it leaves behind when it races a twin or when S3 answers a
 * create-only write with 409 ConditionalRequestConflict, against DynamoDB Local and the edge.
 */
import { describe, expect, it } from 'vitest';
import { ingestSettings } from '../../adapters/wiring.ts';
import { loadIngestConfig } from '../../shared/config.ts';
import { ingestMessage } from '../../shared/ingest.ts';
import { widestBatch } from '../support/bounds.ts';
import { expectedHourly, expectedOrders, seedBatches } from '../support/fixtures.ts';
import { createPipeline, uniqueName } from '../support/pipeline.ts';

describe('concurrent deliveries of one batch', () => {
  it.each([
    ['a one-part batch', () => seedBatches()[0] ?? ''],
    ['a six-part batch', () => widestBatch(uniqueName('twins')).body],
  ])('report applied exactly once and duplicate for the rest, for %s', async (_, body) => {
    for (let round = 0; round < 4; round++) {
      const p = await createPipeline();
      const settings = ingestSettings(loadIngestConfig(p.env));
      const message = { body: body(), sentAtMs: Date.now() };
      const outcomes = await Promise.all(
        ['a', 'b', 'c'].map((id) =>
          ingestMessage({ ...message, messageId: id }, p.ports, settings),
        ),
      );
      expect(outcomes.map((o) => o.kind).sort()).toEqual(['applied', 'duplicate', 'duplicate']);
      // And a later redelivery, once everything is committed, is a duplicate too.
      const again = await ingestMessage({ ...message, messageId: 'd' }, p.ports, settings);
      expect(again.kind).toBe('duplicate');
    }
  });
});

describe('commits cancelled by transaction conflicts', () => {
  it('counts the attempts tried again in the outcome when the batch still applies', async () => {
    const p = await createPipeline();
    const settings = ingestSettings(loadIngestConfig(p.env));
    const [first = '', second = ''] = seedBatches();
    p.faults.add({ site: 'TransactWriteItems', kind: 'transaction-conflict', times: 3 });
    const contended = await ingestMessage(
      { body: first, messageId: 'a', sentAtMs: Date.now() },
      p.ports,
      settings,
    );
    expect(contended).toMatchObject({ kind: 'applied', commitConflictRetries: 3 });
    const quiet = await ingestMessage(
      { body: second, messageId: 'b', sentAtMs: Date.now() },
      p.ports,
      settings,
    );
    expect(quiet).toMatchObject({ kind: 'applied', commitConflictRetries: 0 });
  });
});

describe('S3 409 ConditionalRequestConflict on the archive write', () => {
  it('is retried within the delivery, which then applies the batch', async () => {
    const p = await createPipeline();
    p.faults.add({ site: 'PutObject:raw', kind: 's3-conflict', times: 2 });
    const res = await p.ingest(seedBatches().map((body) => ({ body })));
    expect(res.batchItemFailures).toEqual([]);
    expect(p.faults.fired).toEqual(['s3-conflict@PutObject:raw', 's3-conflict@PutObject:raw']);
    expect(await p.listKeys('raw/')).toHaveLength(4);
    await p.drainAggregates();
    expect(await p.orders()).toEqual(expectedOrders());
    expect(await p.hourly()).toEqual(expectedHourly());
  });

  it('is never taken for an archived batch: while it persists nothing commits, and the redelivery applies it', async () => {
    const p = await createPipeline();
    const [body = ''] = seedBatches();
    p.faults.add({ site: 'PutObject:raw', kind: 's3-conflict', times: 4 });
    const first = await p.ingest([{ body, messageId: 'm1' }]);
    expect(first.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
    expect(p.faults.fired).toHaveLength(4);
    // Claimed, not archived, not committed: the batch is pending, nothing is counted.
    expect(await p.listKeys('raw/')).toEqual([]);
    expect(await p.pendingBatches()).toEqual(['make-orders-1']);
    await p.drainAggregates();
    expect(await p.hourly()).toEqual([]);

    const retry = await p.ingest([{ body, messageId: 'm1', receiveCount: 2 }]);
    expect(retry.batchItemFailures).toEqual([]);
    expect(await p.listKeys('raw/')).toEqual(['raw/date=2026-10-01/hour=09/make-orders-1.json']);
    expect(await p.pendingBatches()).toEqual([]);
  });
});
