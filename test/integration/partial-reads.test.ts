/**
 * DynamoDB may answer part of a `BatchGetItem` and return the other keys as unprocessed (a
 * response past 16 MB, a throttled partition); DynamoDB Local never does, so the fault injector
 * plays it. Every reader of items in batches must ask again for the rest: the orders a batch
 * settles against, and what an operator reads.
 */
import { describe, expect, it } from 'vitest';
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { DynamoOrderReader } from '../../adapters/dynamo-order-reader.ts';
import { inspectBatch } from '../../cli/commands/batch.ts';
import { expectedHourly, expectedOrders, seedBatches } from '../support/fixtures.ts';
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
