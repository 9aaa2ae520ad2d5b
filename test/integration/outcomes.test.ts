/**
 * What a delivery reports and what it leaves behind when it races a twin or when S3 answers a
 * create-only write with 409 ConditionalRequestConflict, against DynamoDB Local and the edge.
 */
import { describe, expect, it } from 'vitest';
import { ingestSettings } from '../../adapters/wiring.ts';
import { loadIngestConfig } from '../../shared/config.ts';
import { ingestMessage } from '../../shared/ingest.ts';
import { widestBatch } from '../support/bounds.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { expectedHourly, expectedOrders, seedBatches } from '../support/fixtures.ts';
import { createPipeline, type Pipeline, uniqueName } from '../support/pipeline.ts';

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

/** Resolves to `value` after `ms`, without keeping the process alive. */
const after = <T>(ms: number, value: T) =>
  new Promise<T>((resolve) => setTimeout(resolve, ms, value).unref());

/**
 * Holds the next call of `held` until a call of `until` starts, and resolves to what released
 * it. Were `until` only ever called after `held` ends, it would never start: the deadline then
 * lets the test fail instead of hanging.
 */
const holdUntilCalled = (p: Pipeline, held: string, until: string) => {
  const released = Promise.race([
    p.faults.nextCall(until).then(() => `${until} started`),
    after(DEADLINE_MS, 'the deadline passed'),
  ]);
  p.faults.add({ site: held, kind: 'hold', release: released });
  return released;
};

/**
 * Delivers the first seed batch with a crash before `site`: the delivery fails, leaving the batch
 * pending (and what `afterFailure` checks), and the redelivery applies it.
 */
const failThenRedeliver = async (site: string, afterFailure: (p: Pipeline) => void) => {
  const p = await createPipeline();
  const [body = ''] = seedBatches();
  p.faults.add({ site, kind: 'crash-before' });
  const first = await p.ingest([{ body, messageId: 'm1' }]);
  expect(first.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
  afterFailure(p);
  expect(await p.pendingBatches()).toEqual(['make-orders-1']);
  const retry = await p.ingest([{ body, messageId: 'm1', receiveCount: 2 }]);
  expect(retry.batchItemFailures).toEqual([]);
  expect(await p.pendingBatches()).toEqual([]);
  return p;
};

/** A pipeline that applied the first seed batch with `held` held until `until` started. */
const applyHolding = async (held: string, until: string) => {
  const p = await createPipeline();
  const [body = ''] = seedBatches();
  const released = holdUntilCalled(p, held, until);
  const res = await p.ingest([{ body }]);
  expect(res.batchItemFailures).toEqual([]);
  expect(await released).toBe(`${until} started`);
  return p;
};

describe('the raw archive', () => {
  it('is written while the orders are read, and before any order write', async () => {
    const p = await applyHolding('PutObject:raw', 'BatchGetItem');
    const trace = p.faults.trace;
    const archived = trace.indexOf('PutObject:raw done');
    expect(trace.indexOf('BatchGetItem')).toBeLessThan(archived);
    expect(trace.indexOf('UpdateItem:order')).toBeGreaterThan(archived);
    expect(trace.indexOf('PutObject:arrivals')).toBeGreaterThan(archived);
    await p.drainAggregates();
    expect(await p.listKeys('raw/')).toHaveLength(1);
  });

  it('fails the delivery with no order written when it cannot be written, and the redelivery applies the batch', async () => {
    const p = await failThenRedeliver('PutObject:raw', ({ faults }) => {
      expect(faults.calls.get('BatchGetItem')).toBe(1);
      expect(faults.calls.get('UpdateItem:order')).toBeUndefined();
      expect(faults.calls.get('PutObject:arrivals')).toBeUndefined();
    });
    expect(await p.listKeys('raw/')).toHaveLength(1);
  });
});

describe('the arrival marker', () => {
  it('is written while the orders settle, and the batch commits only after both', async () => {
    const p = await applyHolding('PutObject:arrivals', 'UpdateItem:order');
    const trace = p.faults.trace;
    const markerWritten = trace.indexOf('PutObject:arrivals done');
    expect(trace.indexOf('UpdateItem:order')).toBeLessThan(markerWritten);
    expect(markerWritten).toBeLessThan(trace.indexOf('TransactWriteItems'));
    expect(trace.lastIndexOf('UpdateItem:order done')).toBeLessThan(
      trace.indexOf('TransactWriteItems'),
    );
    expect(await p.listKeys('arrivals/')).toHaveLength(1);
  });

  it('fails the delivery with no write left in flight and nothing committed when it cannot be written, and the redelivery applies the batch', async () => {
    const p = await failThenRedeliver('PutObject:arrivals', ({ faults }) => {
      // Every order write the delivery started had ended before it failed.
      const written = faults.trace.filter((t) => t === 'UpdateItem:order done').length;
      expect(faults.calls.get('UpdateItem:order')).toBeGreaterThan(0);
      expect(written).toBe(faults.calls.get('UpdateItem:order'));
      expect(faults.calls.get('TransactWriteItems')).toBeUndefined();
    });
    expect(await p.listKeys('arrivals/')).toHaveLength(1);
  });
});
