/**
 * The bench's verdict on each pass: it says onceflow is exact where the naive writer is not, so
 * it must see a double count and a stale order when there is one. A verdict that finds nothing
 * would print every approach exact.
 */
import { describe, expect, inject, it } from 'vitest';
import { onceflowApproach, type PassState } from '../../harness/bench/approaches.ts';
import { naiveApproach } from '../../harness/bench/baselines.ts';
import { exactnessOf } from '../../harness/bench/exactness.ts';
import { buildWorkload } from '../../harness/bench/workload.ts';
import { referenceModel } from '../../harness/model.ts';
import { parseBatch } from '../support/json.ts';

const workload = buildWorkload({
  events: 200,
  batchSize: 20,
  seed: 7,
  duplicateShare: 0.3,
  crashShare: 0,
});
const model = referenceModel(workload.batches);
/** The events the duplicate pass carries beyond the clean one's: what a naive writer counts twice. */
const redeliveredEvents =
  workload.duplicates.reduce((s, m) => s + parseBatch(m.body).events.length, 0) - workload.events;

describe('the bench’s exactness verdict', () => {
  it('finds the naive writer’s double counts on redelivered batches, and none of onceflow’s', async () => {
    expect(workload.duplicated).toBeGreaterThan(0);
    const { endpoint, assemblyDir } = { endpoint: inject('endpoint'), ...inject('assembly') };
    const naive = await naiveApproach(endpoint, assemblyDir).runPass(workload.duplicates, {});
    expect(exactnessOf(naive.state, model, 0)).toMatchObject({
      exact: false,
      doubleCountedEvents: redeliveredEvents,
      conflictsReported: undefined,
    });
    const onceflow = await onceflowApproach(endpoint, assemblyDir).runPass(workload.duplicates, {});
    expect(exactnessOf(onceflow.state, model, 0)).toEqual({
      exact: true,
      doubleCountedEvents: 0,
      staleOrders: 0,
      conflictsReported: 0,
    });
  });

  it('counts a lost event, a stale or missing order, and conflicts reported short', () => {
    const state: PassState = { orders: model.orders, hourly: model.hourly, conflictsReported: 2 };
    expect(exactnessOf(state, model, 2).exact).toBe(true);
    // One event short in the first hour.
    const [first, ...rest] = model.hourly;
    if (!first) throw new Error('the model has no hour');
    const short = { ...state, hourly: [{ ...first, events: first.events - 1 }, ...rest] };
    expect(exactnessOf(short, model, 2)).toMatchObject({ exact: false, doubleCountedEvents: -1 });
    // One order on another state, one missing.
    const [a, b, ...others] = model.orders;
    if (!a || !b) throw new Error('the model has fewer than two orders');
    const stale = { ...state, orders: [{ ...a, status: `${a.status}-older` }, ...others] };
    expect(exactnessOf(stale, model, 2)).toMatchObject({ exact: false, staleOrders: 2 });
    // One conflicting re-send not reported.
    expect(exactnessOf(state, model, 3)).toMatchObject({ exact: false, conflictsReported: 2 });
  });
});
