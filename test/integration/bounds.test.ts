/**
 * Valid batches at every bound of the contract, through the real handlers on the emulators and
 * through the local runtime's bundled functions. Each must apply first time (nothing would reach
 * a DLQ), leave no ledger entry pending, end equal to the reference model, and pass verify.
 */
import { describe, expect, it } from 'vitest';
import { referenceModel } from '../../harness/model.ts';
import {
  type BoundBatch,
  bodyOfSize,
  everyCellOfOneHour,
  growingHour,
  oneLongOrder,
  tieScenarios,
  widestBatch,
} from '../support/bounds.ts';
import { createPipeline, uniqueName } from '../support/pipeline.ts';
import { useRuntimePipelines } from '../support/runtime-pipeline.ts';

const throughRuntime = useRuntimePipelines();

type AnyPipeline =
  | Awaited<ReturnType<typeof createPipeline>>
  | Awaited<ReturnType<typeof throughRuntime>>;

/** Delivers each batch once, concurrently up to `parallel`, and checks every end-state promise. */
const applyAndCheck = async (p: AnyPipeline, batches: readonly BoundBatch[], parallel = 1) => {
  const queue = [...batches];
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let b = queue.shift(); b; b = queue.shift()) {
        const res = await p.ingest([{ body: b.body }]);
        if (res.batchItemFailures.length > 0) failures.push(b.batchId);
      }
    }),
  );
  // A failed first delivery is a message on its way to the DLQ.
  expect(failures).toEqual([]);
  await p.drainAggregates();
  expect(await p.pendingBatches()).toEqual([]);
  expect(await p.rejects()).toEqual([]);
  const model = referenceModel(batches);
  expect(await p.orders()).toEqual(model.orders);
  expect(await p.hourly()).toEqual(model.hourly);
  expect((await p.verifyHours()).differences).toEqual([]);
};

// One case at a time: a local runtime takes over the shared emulators' edge hooks, so two
// runtimes on one set of emulators must not run at once.
describe.each([
  ['invoked directly', createPipeline],
  ['invoked through the local runtime', throughRuntime],
])('valid batches at the contract’s bounds, %s', (_, createPipeline) => {
  it('applies a batch of 500 events spread over 500 hours and currencies, in six transactions', async () => {
    const p = await createPipeline();
    await applyAndCheck(p, [widestBatch(uniqueName('wide'))]);
  });

  it('applies every status in every supported currency within one hour', async () => {
    const p = await createPipeline();
    const batches = everyCellOfOneHour(uniqueName('cells'));
    await applyAndCheck(p, batches, 2);
    const [hour] = await p.hourly();
    expect(Object.values(hour?.byStatus ?? {}).map((s) => Object.keys(s.amounts).length)).toEqual([
      165, 165, 165, 165, 165, 165,
    ]);
    expect(hour?.byStatus.placed?.amounts.JPY).toBe('68');
    expect(hour?.byStatus.placed?.amounts.KWD).toBe('75.777');
  });

  it('applies five batches of 500 events of one order, its claims in ten writes per batch', async () => {
    const p = await createPipeline();
    await applyAndCheck(p, oneLongOrder(uniqueName('long')));
  });

  it('applies a hundred batches that each add new (status, currency) pairs to one hour', async () => {
    const p = await createPipeline();
    await applyAndCheck(p, growingHour(uniqueName('grow')), 4);
  });

  it('applies a body of exactly 1 MiB, the queue’s maximum message size', async () => {
    const p = await createPipeline();
    const big = bodyOfSize(uniqueName('big'), 1_048_576);
    expect(Buffer.byteLength(big.body)).toBe(1_048_576);
    await applyAndCheck(p, [big]);
    expect(await p.listKeys('raw/')).toHaveLength(1);
  });

  it('ends every order tied at one instant on the id greatest in UTF-8 order, whatever the arrival order and batching', async () => {
    const p = await createPipeline();
    const batches = tieScenarios(uniqueName('tie'));
    await applyAndCheck(p, batches, 4);
    const winners = new Set((await p.orders()).map((o) => o.status));
    // The supplementary-character id carries `shipped`: it wins for all 24 orders.
    expect([...winners]).toEqual(['shipped']);
  });
});
