/**
 * Answers in part, which the local stores never give for a test's data, so the fault injector
 * plays them. DynamoDB may answer part of a `BatchGetItem` and return the other keys as
 * unprocessed (a response past 16 MB, a throttled partition): every reader of items in batches
 * must ask again for the rest. DynamoDB's `Query` and `Scan` and S3's listings end a page at
 * 1 MB or 1,000 keys: every reader of them must follow the pages to the end.
 */
import { describe, expect, it } from 'vitest';
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { DynamoCounterReader } from '../../adapters/dynamo-counters.ts';
import { DynamoOrderReader } from '../../adapters/dynamo-order-reader.ts';
import { S3Store } from '../../adapters/s3.ts';
import { inspectBatch } from '../../cli/commands/batch.ts';
import { verify } from '../../cli/commands/reconcile.ts';
import { RAW_PREFIX } from '../../shared/keys.ts';
import { expectedHourly, expectedOrders, seedBatches } from '../support/fixtures.ts';
import { apply, objectOf } from '../support/hours.ts';
import { parseBatch } from '../support/json.ts';
import { cliTarget, createPipeline, type Pipeline } from '../support/pipeline.ts';

const partlyAnswered = (p: Pipeline) =>
  p.faults.fired.filter((f) => f === 'unprocessed-keys@BatchGetItem').length;

describe('batch reads answered in part', () => {
  it('applies the reference stream, and reads it back whole, when every batch read leaves half its keys unprocessed', async () => {
    const p = await createPipeline();
    p.faults.add({ site: 'BatchGetItem', kind: 'unprocessed-keys', times: 10_000 });
    const batches = seedBatches();
    await p.deliverUntilDone(batches);
    await p.drainAggregates();
    expect(await p.orders()).toEqual(expectedOrders());
    expect(await p.hourly()).toEqual(expectedHourly());
    expect(partlyAnswered(p)).toBeGreaterThan(0);

    // An operator's reads through the same clients agree with reads DynamoDB answered whole.
    const readers = (dynamo: Pipeline['admin']['dynamo']) => ({
      ledger: new DynamoLedger(dynamo, p.tableName),
      orders: new DynamoOrderReader(dynamo, p.tableName),
    });
    const [faulted, whole] = [readers(p.clients.dynamo), readers(p.admin.dynamo)];
    let before = partlyAnswered(p);
    expect(await faulted.ledger.totals()).toEqual(await whole.ledger.totals());
    expect(partlyAnswered(p)).toBeGreaterThan(before);

    before = partlyAnswered(p);
    const page = await faulted.orders.ordersPage({ limit: 1000 });
    expect(page.orders).toEqual(expectedOrders());
    expect(page.orders).toEqual((await whole.orders.ordersPage({ limit: 1000 })).orders);
    expect(partlyAnswered(p)).toBeGreaterThan(before);

    before = partlyAnswered(p);
    const { batchId } = parseBatch(batches[0] ?? '');
    const report = await inspectBatch(cliTarget(p), batchId);
    expect(report?.events).toEqual((await inspectBatch(p.target, batchId))?.events);
    expect(report?.fates?.unclaimed).toBe(0);
    expect(partlyAnswered(p)).toBeGreaterThan(before);
  });
});

describe('listings answered one item a page', () => {
  const shortPages = (p: Pipeline) =>
    p.faults.fired.filter((f) => f.startsWith('short-pages@')).length;

  it('applies and publishes the reference stream, and lists it back whole, when every page holds one item', async () => {
    const p = await createPipeline();
    for (const site of ['Query', 'Scan', 'ListObjectsV2'])
      p.faults.add({ site, kind: 'short-pages', times: 100_000 });
    const batches = seedBatches();
    await p.deliverUntilDone(batches);
    await p.drainAggregates();
    expect(await p.orders()).toEqual(expectedOrders());
    expect(await p.hourly()).toEqual(expectedHourly());
    // An hour of two currencies: its counters are two items, read a page each.
    const hour = '2026-11-05T09:00:00Z';
    const event = (id: string, currency: string, amount: string) => ({
      eventId: id,
      orderId: `o-${id}`,
      customerId: 'c-1',
      status: 'placed',
      amount,
      currency,
      eventTime: '2026-11-05T09:20:00Z',
    });
    await apply(
      p,
      JSON.stringify({
        batchId: 'b-two-currencies',
        events: [event('e-usd', 'USD', '1.00'), event('e-eur', 'EUR', '2.50')],
      }),
    );
    expect(await objectOf(p, hour)).toMatchObject({
      events: 2,
      byStatus: { placed: { events: 2, amounts: { EUR: '2.50', USD: '1.00' } } },
    });
    expect(p.faults.fired).toContain('short-pages@Query');

    // What the pipeline's clients list, page by page, against the stores' whole answers.
    const faulted = cliTarget(p);
    const before = shortPages(p);
    const verified = await verify(faulted);
    expect(verified).toEqual(await verify(p.target));
    expect(verified.differences).toEqual([]);
    const listings = (t: typeof faulted) => ({
      hours: new DynamoCounterReader(t.clients.dynamo, p.tableName).hours(),
      orders: new DynamoOrderReader(t.clients.dynamo, p.tableName).listOrders(),
      ledger: new DynamoLedger(t.clients.dynamo, p.tableName).batches(),
      archive: new S3Store(t.clients.s3, p.bucketName).listKeys(RAW_PREFIX),
    });
    const [paged, whole] = [listings(faulted), listings(p.target)];
    expect(await paged.hours).toEqual(await whole.hours);
    expect((await paged.hours).length).toBeGreaterThan(1);
    expect(await paged.orders).toEqual(await whole.orders);
    expect((await paged.orders).length).toBe(expectedOrders().length + 2);
    expect(await paged.ledger).toEqual(await whole.ledger);
    expect(await paged.archive).toEqual(await whole.archive);
    expect((await paged.archive).length).toBeGreaterThan(1);
    expect(shortPages(p)).toBeGreaterThan(before);
  });
});
