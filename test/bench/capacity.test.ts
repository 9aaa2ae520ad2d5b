import { describe, expect, inject, it } from 'vitest';
import { onceflowApproach } from '../../harness/bench/approaches.ts';
import { itemBytes } from '../../harness/bench/meter.ts';
import { buildWorkload } from '../../harness/bench/workload.ts';
import { referenceModel } from '../../harness/model.ts';
import { planBatch } from '../../shared/ingest.ts';
import { validateBatch } from '../../shared/schema.ts';
import { watermarkStepOf } from '../../shared/watermark.ts';
import { everyCellOfOneHour, growingHour } from '../support/bounds.ts';
import { createPipeline, uniqueName } from '../support/pipeline.ts';

/** Write units are deterministic for a given workload: the test pins them, timings are never asserted. */
describe('onceflow’s write cost', () => {
  const workload = buildWorkload({
    events: 600,
    batchSize: 50,
    seed: 11,
    duplicateShare: 0.3,
    crashShare: 0,
  });

  /**
   * AWS billing for the calls onceflow makes: claim 1 and its pending-index entry 1, each order
   * write 1 (its item, state and claims, stays under 1 KB), each transactional item 2 (the last
   * part also carries the totals item), and the pending-index entry's removal inside that
   * transaction 2 (an index update made by a transactional write bills like one, as DynamoDB
   * Local reports it). Besides, each order's customer-index entry 1, once, when the order is
   * first written (later writes change no key of the index).
   */
  const distinctOrders = new Set(workload.batches.flatMap((b) => b.events.map((e) => e.orderId)))
    .size;
  const expectedUnits = workload.clean.reduce((sum, m) => {
    const result = validateBatch(JSON.parse(m.body));
    if (!result.ok) throw new Error(result.detail);
    const plan = planBatch(result.batch, { counterShards: 4 });
    return (
      sum +
      2 +
      plan.orders.length +
      plan.parts.reduce((s, part) => s + 2 * (1 + part.length), 0) +
      2 +
      2
    );
  }, distinctOrders);

  it('stays at most 1.25 write units per event plus one per order, exactly as billed, and exact', async () => {
    const approach = onceflowApproach(inject('endpoint'), inject('assembly').assemblyDir);
    const { measure, state } = await approach.runPass(workload.clean, {});
    // Besides its planned calls, an order write may lose a race to a concurrent batch of the
    // same order (it is billed, then settled again): only order writes may fail a condition.
    const { UpdateItem: lostRaces = 0, ...otherFailures } = measure.failedConditionUnits;
    expect(otherFailures).toEqual({});
    expect(measure.writeUnits - lostRaces - measure.watermarkWriteUnits).toBe(expectedUnits);
    // The watermark: one environment writes at most once per later step it sees, and the issue's
    // bound holds (at most 0.02 write units per event).
    const steps = new Set(
      workload.clean.map((m) => {
        const result = validateBatch(JSON.parse(m.body));
        if (!result.ok) throw new Error(result.detail);
        return watermarkStepOf(planBatch(result.batch, { counterShards: 4 }).latestMs, Date.now());
      }),
    ).size;
    expect(measure.watermarkWriteUnits).toBeGreaterThan(0);
    expect(measure.watermarkWriteUnits).toBeLessThanOrEqual(steps);
    expect(measure.watermarkWriteUnits / workload.events).toBeLessThanOrEqual(0.02);
    expect((expectedUnits - distinctOrders) / workload.events).toBeLessThanOrEqual(1.25);
    const { orders, hourly } = referenceModel(workload.batches);
    expect(state).toEqual({ orders, hourly, conflictsReported: 0 });
  });

  it('spends exactly one write unit on a redelivered batch that was already applied', async () => {
    expect(workload.duplicated).toBeGreaterThan(0);
    const approach = onceflowApproach(inject('endpoint'), inject('assembly').assemblyDir);
    const { measure, state } = await approach.runPass(workload.duplicates, {});
    // The second wave holds only the redelivered batches, sent after every original applied.
    expect(measure.waveWriteUnits[1]).toBe(workload.duplicated);
    const { orders, hourly } = referenceModel(workload.batches);
    expect(state).toEqual({ orders, hourly, conflictsReported: 0 });
  });

  it('stays exact when events are re-sent under new batch ids, reporting each conflicting copy', async () => {
    expect(workload.resentEvents).toBeGreaterThan(0);
    const approach = onceflowApproach(inject('endpoint'), inject('assembly').assemblyDir);
    const { state } = await approach.runPass(workload.rebatch, {});
    const model = referenceModel([...workload.batches, ...workload.resent]);
    expect(model.conflicts).toBeGreaterThan(0);
    expect(state).toEqual({
      orders: model.orders,
      hourly: model.hourly,
      conflictsReported: model.conflicts,
    });
  });
});

describe('a commit into an hour that holds many cells', () => {
  /** AWS bills a transactional write 2 units per started KB of the larger of before and after. */
  const billedUnits = (before: number, after: number) =>
    2 * Math.max(1, Math.ceil(Math.max(before, after) / 1024));

  it('bills the same write units whatever the hour already holds, every counter item under 1 KB', async () => {
    const p = await createPipeline();
    const prefix = uniqueName('cap');
    const hourItems = async () =>
      (await p.tableItems()).filter((i) => i.pk?.S === 'HOUR#2026-10-01T05:00:00Z');
    const sizes = async () =>
      new Map((await hourItems()).map((i) => [i.sk?.S ?? '', itemBytes(i)] as const));
    // Three events of the hour, in three currencies: three counter items per commit.
    const probeEvents = everyCellOfOneHour(`${prefix}-probe`)[0]?.events.slice(0, 3) ?? [];

    /** Commits a probe batch and returns what AWS bills for its counter items. */
    const commitCost = async (batchId: string) => {
      const body = JSON.stringify({ batchId, events: probeEvents });
      const result = validateBatch(JSON.parse(body));
      if (!result.ok) throw new Error(result.detail);
      const plan = planBatch(result.batch, { counterShards: 4 });
      const before = await sizes();
      await p.deliverUntilDone([body]);
      const after = await sizes();
      const shard = `SHARD#${String(plan.shard).padStart(3, '0')}`;
      return plan.parts
        .flat()
        .map((d) => `${shard}#${d.currency}`)
        .reduce((sum, sk) => sum + billedUnits(before.get(sk) ?? 0, after.get(sk) ?? 0), 0);
    };

    const first = await commitCost(`${prefix}-first`);
    for (const b of everyCellOfOneHour(prefix)) await p.deliverUntilDone([b.body]);
    for (const b of growingHour(`${prefix}-more`)) await p.deliverUntilDone([b.body]);
    const later = await commitCost(`${prefix}-later`);

    const items = await hourItems();
    expect(items.length).toBeGreaterThanOrEqual(165);
    expect(Math.max(...items.map(itemBytes))).toBeLessThan(1024);
    expect(later).toBe(first);
    expect(first).toBe(2 * 3); // three currencies, one item each, under 1 KB
  });
});
