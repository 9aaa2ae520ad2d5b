import { describe, expect, inject, it } from 'vitest';
import { onceflowApproach } from '../../bench/approaches.ts';
import { referenceModel } from '../../bench/model.ts';
import { buildWorkload } from '../../bench/workload.ts';
import { planBatch } from '../../shared/ingest.ts';
import { validateBatch } from '../../shared/schema.ts';

/** Write units are deterministic for a given workload: the test pins them, timings are never asserted. */
describe('onceflow’s write cost', () => {
  const workload = buildWorkload({
    events: 600,
    batchSize: 50,
    seed: 11,
    duplicateShare: 0.3,
    crashShare: 0,
  });

  /** AWS billing for the calls onceflow makes: claim 1, each order write 1, each transactional item 2. */
  const expectedUnits = workload.clean.reduce((sum, m) => {
    const result = validateBatch(JSON.parse(m.body));
    if (!result.ok) throw new Error(result.detail);
    const plan = planBatch(result.batch, { counterShards: 4 });
    return (
      sum +
      1 +
      plan.orderUpdates.length +
      plan.parts.reduce((s, part) => s + 2 * (1 + part.length), 0)
    );
  }, 0);

  it('stays at most 1.25 write units per event, exactly as billed for its calls, and exact', async () => {
    const approach = onceflowApproach(inject('endpoint'));
    const { measure, state } = await approach.runPass(workload.clean, {});
    expect(measure.writeUnits).toBe(expectedUnits);
    expect(measure.writeUnits / workload.events).toBeLessThanOrEqual(1.25);
    const model = referenceModel(workload.batches);
    expect(state).toEqual(model);
  });

  it('spends exactly one write unit on a redelivered batch that was already applied', async () => {
    expect(workload.duplicated).toBeGreaterThan(0);
    const approach = onceflowApproach(inject('endpoint'));
    const { measure, state } = await approach.runPass(workload.duplicates, {});
    expect(measure.writeUnits - expectedUnits).toBe(workload.duplicated);
    expect(state).toEqual(referenceModel(workload.batches));
  });
});
