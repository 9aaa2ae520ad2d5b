/**
 * `npm run bench -- [--events N] [--batch-size n]`: cost per event and throughput of onceflow
 * against a naive writer and Powertools idempotency (per message and per event), on DynamoDB
 * Local, with the same workload in four passes (clean, redelivered batches, crashes, events
 * re-sent in new batches), plus bundle sizes and init times. Prints a table; writes
 * bench/results.json.
 */
import { writeFileSync } from 'node:fs';
import { cpus, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import Table from 'cli-table3';
import { Command } from 'commander';
import { type Approach, onceflowApproach, type PassState } from '../harness/bench/approaches.ts';
import {
  naiveApproach,
  powertoolsApproach,
  powertoolsPerEventApproach,
} from '../harness/bench/baselines.ts';
import { measureColdStarts, SDK_VARIANTS } from '../harness/bench/cold-start.ts';
import { buildWorkload } from '../harness/bench/workload.ts';
import { referenceModel } from '../harness/model.ts';
import { startEmulators } from '../local/emulators.ts';
import { projectAssembly, synthesize } from '../local/synth.ts';

// The handlers log and emit metrics through Powertools: quiet here, the figures are the output.
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

const program = new Command('npm run bench --')
  .option('--events <n>', 'events in the workload', Number, 20_000)
  .option('--batch-size <n>', 'events per batch', Number, 50)
  .option('--seed <n>', 'workload seed', Number, 1)
  .option('--duplicate-share <r>', 'share of batches delivered twice', Number, 0.2)
  .option('--crash-share <r>', 'share of batches crashed after their writes', Number, 0.05)
  .option('--rebatch-share <r>', 'share of events re-sent in new batches', Number, 0.2)
  .option('--conflict-share <r>', 'share of re-sent events with other content', Number, 0.1)
  .option('--cold-samples <n>', 'fresh processes per function and SDK variant', Number, 15)
  .option('--out <file>', 'results file', join(import.meta.dirname, 'results.json'))
  .parse();
const o = program.opts<{
  events: number;
  batchSize: number;
  seed: number;
  duplicateShare: number;
  crashShare: number;
  rebatchShare: number;
  conflictShare: number;
  coldSamples: number;
  out: string;
}>();

const workload = buildWorkload({
  events: o.events,
  batchSize: o.batchSize,
  seed: o.seed,
  duplicateShare: o.duplicateShare,
  crashShare: o.crashShare,
  rebatchShare: o.rebatchShare,
  conflictShare: o.conflictShare,
});
const model = referenceModel(workload.batches);
const rebatchModel = referenceModel([...workload.batches, ...workload.resent]);
const expectedEvents = model.hourly.reduce((s, h) => s + h.events, 0);
console.error(
  `workload: ${workload.events} events in ${workload.batches.length} batches of ${o.batchSize} over ${workload.hours} hours; ` +
    `duplicate pass +${workload.duplicated} batches; crash pass ${workload.crashBatches.size} crashes; ` +
    `re-batch pass +${workload.resentEvents} events re-sent in ${workload.resent.length} new batches, ${rebatchModel.conflicts} with other content`,
);

/** How a pass's end state differs from the model: double counts and wrong orders. */
const compare = (state: PassState, expectedConflicts: number) => {
  const counted = state.hourly.reduce((s, h) => s + h.events, 0);
  const expectedOrders = new Map(model.orders.map((x) => [x.orderId, JSON.stringify(x)]));
  const staleOrders = state.orders.filter(
    (x) => expectedOrders.get(x.orderId) !== JSON.stringify(x),
  ).length;
  // A re-batch pass must also report every conflicting re-send, where the approach can.
  const conflictsReported = state.conflictsReported;
  const exact =
    JSON.stringify(state.hourly) === JSON.stringify(model.hourly) &&
    JSON.stringify(state.orders) === JSON.stringify(model.orders) &&
    (conflictsReported === undefined || conflictsReported === expectedConflicts);
  return { exact, doubleCountedEvents: counted - expectedEvents, staleOrders, conflictsReported };
};

// Every approach runs on a copy of the synthesized stack: its queue, and for onceflow its table,
// bucket and function configuration.
const project = join(import.meta.dirname, '..');
const assemblyDir = await projectAssembly(project);
// The same app with the AWS SDK bundled and external, side by side for the cold start.
const variantAssemblies = Object.fromEntries(
  SDK_VARIANTS.map((v) => [v, join(project, '.onceflow', 'bench-assemblies', v)]),
) as Record<(typeof SDK_VARIANTS)[number], string>;
for (const [variant, dir] of Object.entries(variantAssemblies))
  await synthesize(project, dir, { awsSdk: variant });
const emulators = await startEmulators();
const results: Record<string, unknown> = {};
let coldStarts: Awaited<ReturnType<typeof measureColdStarts>> = {};
try {
  coldStarts = await measureColdStarts({
    endpoint: emulators.endpoint,
    assemblies: variantAssemblies,
    projectDir: project,
    samples: o.coldSamples,
  });
  console.error(`cold starts measured (${o.coldSamples} fresh processes per function and variant)`);
  const approaches: Approach[] = [
    onceflowApproach(emulators.endpoint, assemblyDir),
    naiveApproach(emulators.endpoint, assemblyDir),
    powertoolsApproach(emulators.endpoint, assemblyDir),
    powertoolsPerEventApproach(emulators.endpoint, assemblyDir),
  ];
  for (const approach of approaches) {
    const clean = await approach.runPass(workload.clean, {});
    console.error(`${approach.name}: clean pass done`);
    const duplicates = await approach.runPass(workload.duplicates, {});
    console.error(`${approach.name}: duplicate pass done`);
    const crash = await approach.runPass(workload.clean, { crashBatches: workload.crashBatches });
    console.error(`${approach.name}: crash pass done`);
    const rebatch = await approach.runPass(workload.rebatch, {});
    console.error(`${approach.name}: re-batch pass done`);
    const perEvent = (n: number) => Number((n / workload.events).toFixed(4));
    const passes = { clean, duplicates, crash, rebatch };
    const checks = Object.fromEntries(
      Object.entries(passes).map(([name, p]) => [
        name,
        compare(p.state, name === 'rebatch' ? rebatchModel.conflicts : 0),
      ]),
    );
    results[approach.name] = {
      writeUnitsPerEvent: perEvent(clean.measure.writeUnits),
      readUnitsPerEvent: perEvent(clean.measure.readUnits),
      requestsPerEvent: perEvent(clean.measure.requests),
      eventsPerSecond: Math.round(workload.events / (clean.measure.ingestMs / 1000)),
      // The second wave holds only the redelivered batches (or the re-sent events).
      writeUnitsPerRedeliveredBatch: Number(
        ((duplicates.measure.waveWriteUnits[1] ?? 0) / Math.max(1, workload.duplicated)).toFixed(3),
      ),
      writeUnitsPerResentEvent: Number(
        ((rebatch.measure.waveWriteUnits[1] ?? 0) / Math.max(1, workload.resentEvents)).toFixed(3),
      ),
      // Order writes lost to a concurrent batch of the same order (part of the write units).
      failedConditionUnitsPerEvent: perEvent(
        Object.values(clean.measure.failedConditionUnits).reduce((a, b) => a + b, 0),
      ),
      s3RequestsPerHourWritten: clean.measure.hoursWritten
        ? Number((clean.measure.s3Requests / clean.measure.hoursWritten).toFixed(2))
        : null,
      exact: Object.values(checks).every((c) => c.exact),
      passes: Object.fromEntries(
        Object.entries(passes).map(([name, p]) => [
          name,
          {
            ...checks[name],
            writeUnitsPerEvent: perEvent(p.measure.writeUnits),
            readUnitsPerEvent: perEvent(p.measure.readUnits),
            requestsPerEvent: perEvent(p.measure.requests),
            invocations: p.measure.invocations,
          },
        ]),
      ),
    };
  }
} finally {
  await emulators.stop();
}

// Today's keys (the default's bundle and init) beside the cold start of both variants.
const DEFAULT_SDK = 'bundled';
const functions = Object.fromEntries(
  Object.entries(coldStarts).map(([name, c]) => [
    name,
    {
      bundleBytes: c[DEFAULT_SDK].bundleBytes,
      initMs: c[DEFAULT_SDK].initMs,
      coldStart: {
        external: c.external,
        bundled: c.bundled,
        default: DEFAULT_SDK,
        faster: c.faster,
        bundledOverExternal: c.bundledOverExternal,
      },
    },
  ]),
);

const output = {
  workload: {
    ...workload.options,
    events: workload.events,
    batches: workload.batches.length,
    hours: workload.hours,
    duplicatedBatches: workload.duplicated,
    crashedBatches: workload.crashBatches.size,
    resentEvents: workload.resentEvents,
    resentBatches: workload.resent.length,
    eventConflicts: rebatchModel.conflicts,
  },
  approaches: results,
  functions,
  machine: {
    cpu: cpus()[0]?.model,
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    platform: `${platform()} ${release()}`,
    node: process.version,
    emulator: 'DynamoDB Local (capacity per AWS billing rules)',
  },
  ranAt: new Date().toISOString(),
};
writeFileSync(o.out, `${JSON.stringify(output, null, 2)}\n`);

type Row = {
  writeUnitsPerEvent: number;
  readUnitsPerEvent: number;
  eventsPerSecond: number;
  writeUnitsPerRedeliveredBatch: number;
  writeUnitsPerResentEvent: number;
  passes: Record<
    string,
    {
      exact: boolean;
      doubleCountedEvents: number;
      staleOrders: number;
      conflictsReported?: number;
    }
  >;
};
const rows = results as Record<string, Row>;
const ratio = (a: number, b: number | undefined) => (b ? `${(a / b).toFixed(2)}×` : '—');
const table = new Table({
  head: [
    '',
    'WCU/event',
    'RCU/event',
    'events/s',
    'WCU/redelivered batch',
    'WCU/re-sent event',
    'exact: clean / duplicates / crash / re-batch',
    'conflicts reported',
  ],
  style: { head: [], border: [], compact: true },
});
for (const [name, r] of Object.entries(rows)) {
  const passes = ['clean', 'duplicates', 'crash', 'rebatch'].map((p) => {
    const c = r.passes[p];
    return c?.exact
      ? 'yes'
      : `NO (${c?.doubleCountedEvents ?? 0} double-counted, ${c?.staleOrders ?? 0} stale orders)`;
  });
  const reported = r.passes.rebatch?.conflictsReported;
  table.push([
    name,
    String(r.writeUnitsPerEvent),
    String(r.readUnitsPerEvent),
    String(r.eventsPerSecond),
    String(r.writeUnitsPerRedeliveredBatch),
    String(r.writeUnitsPerResentEvent),
    passes.join(' / '),
    reported === undefined ? 'no' : `${reported} of ${rebatchModel.conflicts}`,
  ]);
}
console.log(table.toString());
const once = rows.onceflow;
if (once) {
  console.log(
    `onceflow write units per event: ${ratio(once.writeUnitsPerEvent, rows.naive?.writeUnitsPerEvent)} naive, ` +
      `${ratio(once.writeUnitsPerEvent, rows.powertools?.writeUnitsPerEvent)} Powertools per message, ` +
      `${ratio(once.writeUnitsPerEvent, rows['powertools-per-event']?.writeUnitsPerEvent)} Powertools per event`,
  );
}
const fnTable = new Table({
  head: [
    'cold start (median)',
    'SDK',
    'bundle',
    'init',
    'first invocation',
    'init + first',
    'bundled / external',
  ],
  style: { head: [], border: [], compact: true },
});
for (const [name, c] of Object.entries(coldStarts)) {
  for (const variant of SDK_VARIANTS) {
    const v = c[variant];
    fnTable.push([
      name,
      `${variant}${variant === DEFAULT_SDK ? ' (default)' : ''}`,
      `${(v.bundleBytes / 1024).toFixed(1)} KiB`,
      `${v.initMs} ms`,
      `${v.firstInvokeMs} ms`,
      `${(v.initMs + v.firstInvokeMs).toFixed(1)} ms`,
      variant === 'bundled' ? `${c.bundledOverExternal.toFixed(2)}×` : '',
    ]);
  }
}
console.log(fnTable.toString());
console.log(`results written to ${o.out}`);
