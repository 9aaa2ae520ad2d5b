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
import { Command } from 'commander';
import { type Approach, onceflowApproach, type PassMeasure } from '../harness/bench/approaches.ts';
import {
  naiveApproach,
  powertoolsApproach,
  powertoolsPerEventApproach,
} from '../harness/bench/baselines.ts';
import { measureColdStarts, SDK_VARIANTS } from '../harness/bench/cold-start.ts';
import { exactnessOf } from '../harness/bench/exactness.ts';
import { type FreshnessRun, measureFreshness } from '../harness/bench/freshness.ts';
import { measureMemory } from '../harness/bench/memory.ts';
import { dollarsOf, PRICES } from '../harness/bench/prices.ts';
import { printReport } from '../harness/bench/report.ts';
import { findSustainedRate, type RateStep } from '../harness/bench/sustained-rate.ts';
import { measureIngestOverTls, type TlsColdStartReport } from '../harness/bench/tls-cold-start.ts';
import { TlsUnavailableError } from '../harness/bench/tls-proxy.ts';
import { buildWorkload } from '../harness/bench/workload.ts';
import { referenceModel } from '../harness/model.ts';
import { startEmulators } from '../local/emulators.ts';
import { projectAssembly, synthesize } from '../local/synth.ts';
import { DEFAULT_WRITE_CONCURRENCY } from '../shared/config.ts';

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
  .option('--fresh-rate <n>', 'events a second of the freshness stream', Number, 100)
  .option('--fresh-seconds <n>', 'how long the freshness stream runs', Number, 60)
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
  freshRate: number;
  freshSeconds: number;
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
console.error(
  `workload: ${workload.events} events in ${workload.batches.length} batches of ${o.batchSize} over ${workload.hours} hours; ` +
    `duplicate pass +${workload.duplicated} batches; crash pass ${workload.crashBatches.size} crashes; ` +
    `re-batch pass +${workload.resentEvents} events re-sent in ${workload.resent.length} new batches, ${rebatchModel.conflicts} with other content`,
);

// Every approach runs on a copy of the synthesized stack: its queue, and for onceflow its table,
// bucket and function configuration.
const project = join(import.meta.dirname, '..');
const assemblyDir = await projectAssembly(project);
/** The variant the stack deploys (infra/settings.ts `awsSdk`). */
const DEFAULT_SDK = 'bundled';
// The same app with the AWS SDK bundled and external, side by side for the cold start.
const variantAssemblies = Object.fromEntries(
  SDK_VARIANTS.map((v) => [v, join(project, '.onceflow', 'bench-assemblies', v)]),
) as Record<(typeof SDK_VARIANTS)[number], string>;
for (const [variant, dir] of Object.entries(variantAssemblies))
  await synthesize(project, dir, { awsSdk: variant });
// Hour notifications as they were (no coalescing), for freshness and PUTs before and after.
const unwindowedAssembly = join(project, '.onceflow', 'bench-assemblies', 'no-window');
await synthesize(project, unwindowedAssembly, { aggregateWindowSeconds: '0' });
/** Events per batch of the freshness streams. */
const FRESH_BATCH_SIZE = 50;
/** Each freshness stream follows an unmeasured warm-up at its rate, drained (see freshness.ts). */
const FRESH_WARMUP_SECONDS = 20;
const emulators = await startEmulators();
const results: Record<string, unknown> = {};
let coldStarts: Awaited<ReturnType<typeof measureColdStarts>> = {};
/** Ingest's cold path through a TLS proxy, or why it could not be measured. */
let overTls: TlsColdStartReport | undefined;
let memory: Awaited<ReturnType<typeof measureMemory>> = {};
let freshness:
  | (FreshnessRun & {
      sustainedEventsPerSec: number;
      atSustained: FreshnessRun;
      search: readonly RateStep[];
    })
  | undefined;
let freshnessBefore: FreshnessRun | undefined;
try {
  coldStarts = await measureColdStarts({
    endpoint: emulators.endpoint,
    assemblies: variantAssemblies,
    projectDir: project,
    samples: o.coldSamples,
  });
  console.error(`cold starts measured (${o.coldSamples} fresh processes per function and variant)`);
  // With the handshakes AWS adds, at the default writes in flight and at fewer (fewer handshakes,
  // slower warm batches): what the default's choice rests on.
  try {
    overTls = {
      runs: await measureIngestOverTls({
        endpoint: emulators.endpoint,
        assemblyDir: variantAssemblies[DEFAULT_SDK],
        samples: o.coldSamples,
        writeConcurrencies: [DEFAULT_WRITE_CONCURRENCY, 4],
      }),
    };
    console.error('ingest cold starts measured through a TLS proxy');
  } catch (error) {
    if (!(error instanceof TlsUnavailableError)) throw error;
    overTls = { skipped: error.message };
    console.error(`ingest cold starts through TLS skipped: ${error.message}`);
  }
  memory = await measureMemory({ endpoint: emulators.endpoint, assemblyDir, samples: 3 });
  console.error('peak memory measured on the largest valid input');
  const stream = (assembly: string, rate: number, seconds: number) =>
    measureFreshness({
      emulators,
      assemblyDir: assembly,
      rate,
      seconds,
      batchSize: FRESH_BATCH_SIZE,
      warmupSeconds: FRESH_WARMUP_SECONDS,
    });
  freshnessBefore = await stream(unwindowedAssembly, o.freshRate, o.freshSeconds);
  const steady = await stream(assemblyDir, o.freshRate, o.freshSeconds);
  console.error(
    `freshness measured at ${o.freshRate} events/s for ${o.freshSeconds} s, before and after`,
  );
  // The highest rate whose orders queue does not grow (see findSustainedRate).
  const search = await findSustainedRate({
    base: steady,
    stream: (rate, seconds) => stream(assemblyDir, rate, seconds),
    batchSize: FRESH_BATCH_SIZE,
    stepSeconds: 20,
    confirmSeconds: o.freshSeconds,
    onStep: (s) =>
      console.error(
        `  ${s.rate} events/s for ${s.seconds} s (${s.kind}): ${s.keptUp ? 'sustained' : 'queue grew'} (p99 ${s.p99Ms} ms, queue ${s.backlogMax} at most, ${s.backlogAtStart} on average over the first third, grew by ${s.backlogGrowth}, ${s.backlogAtEnd} at the end; failed messages ${JSON.stringify(s.failedMessages)})`,
      ),
  });
  freshness = {
    ...steady,
    sustainedEventsPerSec: search.sustainedEventsPerSec,
    atSustained: search.atSustained,
    search: search.steps,
  };
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
    // Each pass runs one environment per function: one init each, billed as duration.
    const initGbSeconds = (
      approach.name === 'onceflow' ? Object.values(coldStarts) : [coldStarts.IngestOrders]
    ).reduce((sum, c) => sum + (c ? (c[DEFAULT_SDK].initMs / 1000) * (c.memoryMb / 1024) : 0), 0);
    const dollars = (m: PassMeasure) => {
      const d = dollarsOf({ ...m, lambdaGbSeconds: m.lambdaGbSeconds + initGbSeconds });
      const perMillion = (usd: number) => Number(((usd / workload.events) * 1e6).toFixed(4));
      return {
        dynamodb: perMillion(d.dynamodb),
        s3: perMillion(d.s3),
        sqs: perMillion(d.sqs),
        lambda: perMillion(d.lambda),
        total: perMillion(d.total),
      };
    };
    const passes = { clean, duplicates, crash, rebatch };
    const checks = Object.fromEntries(
      Object.entries(passes).map(([name, p]) => [
        name,
        exactnessOf(p.state, model, name === 'rebatch' ? rebatchModel.conflicts : 0),
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
      dollarsPerMillionEvents: Object.fromEntries(
        Object.entries(passes).map(([name, p]) => [name, dollars(p.measure).total]),
      ),
      passes: Object.fromEntries(
        Object.entries(passes).map(([name, p]) => [
          name,
          {
            ...checks[name],
            writeUnitsPerEvent: perEvent(p.measure.writeUnits),
            watermarkWriteUnitsPerEvent: perEvent(p.measure.watermarkWriteUnits),
            readUnitsPerEvent: perEvent(p.measure.readUnits),
            requestsPerEvent: perEvent(p.measure.requests),
            invocations: p.measure.invocations,
            s3PutRequests: p.measure.s3PutRequests,
            s3GetRequests: p.measure.s3GetRequests,
            sqsRequests: p.measure.sqsRequests,
            sqsFifoRequests: p.measure.sqsFifoRequests,
            lambdaGbSeconds: Number(p.measure.lambdaGbSeconds.toFixed(3)),
            dollarsPerMillionEvents: dollars(p.measure),
          },
        ]),
      ),
    };
  }
} finally {
  await emulators.stop();
}

// Today's keys (the default's bundle and init) beside the cold start of both variants.
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
        bundledOverExternalColdOverhead: c.bundledOverExternalColdOverhead,
      },
      ...(memory[name] ? { memory: memory[name] } : {}),
      ...(name === 'IngestOrders' && overTls ? { coldStartOverTls: overTls } : {}),
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
  // Per approach and pass, in USD: what a million events cost at the list prices below.
  dollarsPerMillionEvents: Object.fromEntries(
    Object.entries(results).map(([name, r]) => [
      name,
      (r as { dollarsPerMillionEvents: Record<string, number> }).dollarsPerMillionEvents,
    ]),
  ),
  prices: PRICES,
  freshness: freshness && {
    rateEventsPerSec: freshness.rateEventsPerSec,
    p50Ms: freshness.p50Ms,
    p95Ms: freshness.p95Ms,
    p99Ms: freshness.p99Ms,
    sustainedEventsPerSec: freshness.sustainedEventsPerSec,
    // The full-length stream at the sustained rate.
    p50AtSustainedMs: freshness.atSustained.p50Ms,
    p95AtSustainedMs: freshness.atSustained.p95Ms,
    p99AtSustainedMs: freshness.atSustained.p99Ms,
    atSustained: freshness.atSustained,
    sustainedSearch: freshness.search,
    putsPerHourObjectPerMinute: freshness.putsPerHourObjectPerMinute,
    putsPerHourObjectPerWindow: freshness.putsPerHourObjectPerWindow,
    maxPutsPerHourObjectPerWindow: freshness.maxPutsPerHourObjectPerWindow,
    coalesceWindowSeconds: freshness.coalesceWindowSeconds,
    seconds: freshness.seconds,
    warmupSeconds: freshness.warmupSeconds,
    before: freshnessBefore,
  },
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

printReport({
  results,
  conflicts: rebatchModel.conflicts,
  coldStarts,
  overTls,
  defaultSdk: DEFAULT_SDK,
  memory,
  freshnessBefore,
  freshness,
});
console.log(`results written to ${o.out}`);
