/**
 * The restore drill against DynamoDB Local and the edge: the table goes back to a copy taken
 * earlier, the batches received since (by the arrival index) and those the restored ledger shows
 * pending are re-sent, the hours they touch reconciled, and the end state is the one before the
 * restore.
 */
import { describe, expect, it } from 'vitest';
import { DynamoLedger, touchesLedgerOf } from '../../adapters/dynamo.ts';
import { recoveryKeys } from '../../adapters/recovery.ts';
import { S3Store } from '../../adapters/s3.ts';
import { reconcile } from '../../cli/commands/reconcile.ts';
import { archivedKeys } from '../../cli/commands/replay.ts';
import { restoreTable, snapshotTable } from '../../local/snapshot.ts';
import { seedBatches } from '../support/fixtures.ts';
import { createPipeline, type Pipeline } from '../support/pipeline.ts';

const HOUR = 3_600_000;

const batch = (batchId: string, hour: string, n: number) =>
  JSON.stringify({
    batchId,
    events: Array.from({ length: n }, (_, i) => ({
      eventId: `${batchId}-e${i}`,
      orderId: `${batchId}-o${i % 2}`,
      customerId: 'C1',
      status: 'paid',
      amount: `${i + 1}.50`,
      currency: 'EUR',
      eventTime: `${hour}:${String(i).padStart(2, '0')}:00Z`,
    })),
  });

const endState = async (p: Pipeline) => ({
  orders: await p.orders(),
  hourly: await p.hourly(),
  pending: await p.pendingBatches(),
});

/** The runbook's steps: re-send what the selection names, drain, reconcile their hours, verify. */
const reapply = async (p: Pipeline, receivedFromMs: number) => {
  const store = new S3Store(p.admin.s3, p.bucketName);
  const ledger = new DynamoLedger(p.admin.dynamo, p.tableName);
  const keys = await recoveryKeys(store, ledger, { receivedFromMs, pending: true });
  const bodies = await Promise.all(keys.map(async (key) => (await store.getText(key)) ?? ''));
  await p.deliverUntilDone(bodies);
  await p.drainAggregates();
  const hours = (await p.hourly()).map((h) => Date.parse(h.hour));
  await reconcile(p.target, { fromMs: Math.min(...hours), toMs: Math.max(...hours) + HOUR }, false);
  return keys;
};

describe('restoring the table to an earlier point', () => {
  it('re-applies a late batch received after the restore point, which an event-time replay misses', async () => {
    const p = await createPipeline();
    let now = Date.parse('2026-10-02T12:00:00Z');
    p.setClock(() => now);
    await p.deliverUntilDone(seedBatches());
    await p.drainAggregates();
    const snapshot = await snapshotTable(p.admin.dynamo, p.tableName, () => now);
    // Ten minutes later, in the restore point's own hour of the arrival index: a batch of its own.
    now += 10 * 60_000;
    await p.deliverUntilDone([batch('soon', '2026-10-02T12', 2)]);
    // Two hours later: a batch of the last hour's events, and a late one of events days old.
    now += 2 * HOUR;
    await p.deliverUntilDone([
      batch('today', '2026-10-02T13', 3),
      batch('late', '2026-09-25T10', 4),
    ]);
    await p.drainAggregates();
    const before = await endState(p);

    await restoreTable(p.admin.dynamo, p.tableName, snapshot);
    expect((await endState(p)).orders).not.toEqual(before.orders);
    const lateKey = (await p.listKeys('raw/')).find((k) => k.endsWith('/late.json'));
    expect(lateKey).toBeDefined();
    // Selecting by event time from the restore point finds today's batch but not the late one.
    const byEventTime = await archivedKeys(p.target, {
      fromMs: Math.floor(snapshot.takenAtMs / HOUR) * HOUR,
      toMs: now + HOUR,
    });
    expect(byEventTime.some((k) => k.endsWith('/today.json'))).toBe(true);
    expect(byEventTime).not.toContain(lateKey);

    const replayed = await reapply(p, snapshot.takenAtMs);
    expect(replayed).toContain(lateKey);
    expect(replayed.some((k) => k.endsWith('/soon.json'))).toBe(true);
    expect(await endState(p)).toEqual(before);
    expect((await p.verifyHours()).differences).toEqual([]);
  });

  it('completes a batch that was pending at the restore point and completed after it', async () => {
    const p = await createPipeline();
    let now = Date.parse('2026-10-02T12:00:00Z');
    p.setClock(() => now);
    const [first = '', ...rest] = seedBatches();
    // The first batch crashes before its commit: claimed, archived, settled, not counted.
    p.faults.add({
      site: 'TransactWriteItems',
      kind: 'crash-before',
      when: touchesLedgerOf('make-orders-1'),
    });
    expect((await p.ingest([{ body: first, messageId: 'm1' }])).batchItemFailures).toHaveLength(1);
    // The restore point comes later, in another hour than the batch's arrival.
    now += 1.5 * HOUR;
    const snapshot = await snapshotTable(p.admin.dynamo, p.tableName, () => now);
    expect(await p.pendingBatches()).toEqual(['make-orders-1']);
    // Its redelivery completes it after the restore point; its message is then gone.
    now += HOUR;
    await p.deliverUntilDone([first, ...rest]);
    await p.drainAggregates();
    const before = await endState(p);
    expect(before.pending).toEqual([]);

    await restoreTable(p.admin.dynamo, p.tableName, snapshot);
    expect(await p.pendingBatches()).toEqual(['make-orders-1']);
    // Received before the restore point: only the ledger's pending entries name it.
    const store = new S3Store(p.admin.s3, p.bucketName);
    const ledger = new DynamoLedger(p.admin.dynamo, p.tableName);
    const received = await recoveryKeys(store, ledger, { receivedFromMs: snapshot.takenAtMs });
    expect(received.filter((k) => k.endsWith('/make-orders-1.json'))).toEqual([]);
    const replayed = await reapply(p, snapshot.takenAtMs);
    expect(replayed.filter((k) => k.endsWith('/make-orders-1.json'))).toHaveLength(1);
    expect(await endState(p)).toEqual(before);
    expect((await p.verifyHours()).differences).toEqual([]);
  });
});
