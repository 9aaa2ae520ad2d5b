/**
 * Cold start of each function as deployed, two ways: with the AWS SDK bundled and with the SDK
 * the Lambda runtime provides (external). Each sample is a fresh Node 24 process, as a new
 * execution environment is: it loads the bundle from a directory of its own (bundled: nothing
 * beside it, as on Lambda; external: the project's `node_modules` beside it, standing in for the
 * runtime's copy), with the environment the template gives the function and Lambda's own
 * variables, then runs one invocation against the local edge (client construction, credential
 * resolution and the first requests included). The two variants alternate sample by sample, so a
 * busy moment of the machine falls on both.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import * as v from 'valibot';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/emulators.ts';
import { lambdaVariables } from '../../local/lambda-environment.ts';
import { runProcess } from '../../local/process.ts';
import type { LocalFunction } from '../../local/provision.ts';
import { toSqsEvent, toSqsRecord } from '../../local/sqs-event.ts';
import { provisionStackCopy, type StackCopy } from '../../local/stack-copy.ts';
import { generateStream } from '../generate.ts';
import { unique } from './deliver.ts';

export const SDK_VARIANTS = ['external', 'bundled'] as const;
export type SdkVariant = (typeof SDK_VARIANTS)[number];

/** Medians over fresh processes of one function and set-up. */
export interface ColdPath {
  /** Median module init (the bundle's import), ms. */
  readonly initMs: number;
  /** Median first invocation, ms. */
  readonly firstInvokeMs: number;
  /**
   * Median second invocation of the same kind in the same process, ms: the work itself, warm.
   * `initMs + firstInvokeMs - warmInvokeMs` is what being cold adds.
   */
  readonly warmInvokeMs: number;
}

export interface ColdStart extends ColdPath {
  readonly bundleBytes: number;
}

export interface FunctionColdStart {
  readonly external: ColdStart;
  readonly bundled: ColdStart;
  /** The variant with the shorter cold path (init + first invocation). */
  readonly faster: SdkVariant;
  /** The bundled variant's cold path over the external one's. */
  readonly bundledOverExternal: number;
  /** The same ratio of what being cold adds (the cold path minus a warm invocation). */
  readonly bundledOverExternalColdOverhead: number;
  /** The function's configured memory. */
  readonly memoryMb: number;
}

/**
 * Run in the fresh process: import, one invocation, then warm ones of the same kind (the first
 * of them timed), then the durations on the last line.
 */
const PROBE = `
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const [handlerFile, eventFile, warmEventsFile] = process.argv.slice(2);
const started = performance.now();
const module = await import(pathToFileURL(handlerFile).href);
const initialized = performance.now();
const event = JSON.parse(readFileSync(eventFile, 'utf8'));
const context = {
  functionName: process.env.AWS_LAMBDA_FUNCTION_NAME, functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:' + process.env.AWS_LAMBDA_FUNCTION_NAME,
  memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE, awsRequestId: 'cold-start',
  logGroupName: '/aws/lambda/' + process.env.AWS_LAMBDA_FUNCTION_NAME, logStreamName: 'cold-start',
  callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => Number(process.env.PROBE_TIMEOUT_MS) - (performance.now() - invokedAt),
  done() {}, fail() {}, succeed() {},
};
let invokedAt = performance.now();
const result = await module.handler(event, context);
const invoked = performance.now();
if (result?.batchItemFailures?.length) throw new Error('the invocation failed: ' + JSON.stringify(result));
const maxRssBytes = process.resourceUsage().maxRSS * 1024;
let warmInvokeMs;
for (const [n, warmEvent] of JSON.parse(readFileSync(warmEventsFile, 'utf8')).entries()) {
  const warmStarted = performance.now();
  invokedAt = performance.now();
  const warm = await module.handler(warmEvent, { ...context, awsRequestId: 'warm-' + n });
  warmInvokeMs ??= performance.now() - warmStarted;
  if (warm?.batchItemFailures?.length) throw new Error('a warm invocation failed: ' + JSON.stringify(warm));
}
console.log('COLD-START ' + JSON.stringify({ initMs: initialized - started, firstInvokeMs: invoked - initialized, warmInvokeMs, maxRssBytes }));
`;

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

/** The median of durations, rounded to 0.1 ms. */
export const medianMs = (values: readonly number[]) => Number(median(values).toFixed(1));

/** The medians of fresh processes' runs. */
export const medianColdPath = (runs: readonly FreshRun[]): ColdPath => ({
  initMs: medianMs(runs.map((r) => r.initMs)),
  firstInvokeMs: medianMs(runs.map((r) => r.firstInvokeMs)),
  warmInvokeMs: medianMs(runs.map((r) => r.warmInvokeMs)),
});

/** What the probe prints of a fresh process's run (its output is input, so it is validated). */
const FreshRunSchema = v.object({
  initMs: v.number(),
  firstInvokeMs: v.number(),
  warmInvokeMs: v.number(),
  /** The process's peak resident set size. */
  maxRssBytes: v.number(),
});

export type FreshRun = Readonly<v.InferOutput<typeof FreshRunSchema>>;

const spawnProbe = async (args: string[], env: Record<string, string>): Promise<FreshRun> => {
  const run = await runProcess(process.execPath, args, { env });
  const line = run.stdout.split('\n').find((l) => l.startsWith('COLD-START '));
  if (run.code !== 0 || !line)
    throw new Error(`cold-start probe failed (exit ${run.code}): ${run.stderr.slice(-2000)}`);
  return v.parse(FreshRunSchema, JSON.parse(line.slice('COLD-START '.length)));
};

export interface FreshRunOptions {
  /** The function as provisioned from the template (its bundle and environment). */
  readonly fn: LocalFunction;
  /** Its environment as deployed, pointed at the local edge. */
  readonly environment: Readonly<Record<string, string>>;
  readonly event: unknown;
  /**
   * The warm invocations' events, of the same kind, run after the first; the first of them is
   * timed (`warmInvokeMs`). Default the first event once again.
   */
  readonly warmEvents?: readonly unknown[];
  /** An empty directory of its own: the bundle is copied there, as Lambda unpacks it. */
  readonly dir: string;
  /** A `node_modules` to put beside the bundle (the runtime's SDK); default nothing. */
  readonly runtimeModules?: string;
  /**
   * The time each invocation is given, as Lambda's context reports it. Default the function's
   * configured timeout.
   */
  readonly timeoutMs?: number;
}

/**
 * Loads the function's bundle in a fresh Node 24 process, as a new execution environment does,
 * and runs one invocation: its init and first invocation times, and the process's peak RSS.
 */
export const runFresh = async (o: FreshRunOptions): Promise<FreshRun & { bundleBytes: number }> => {
  const handlerFile = join(o.dir, 'index.mjs');
  copyFileSync(o.fn.handlerFile, handlerFile);
  if (existsSync(`${o.fn.handlerFile}.map`))
    copyFileSync(`${o.fn.handlerFile}.map`, `${handlerFile}.map`);
  if (o.runtimeModules) symlinkSync(o.runtimeModules, join(o.dir, 'node_modules'));
  // The probe and the event sit one level up: nothing but the bundle is beside it.
  const probe = join(dirname(o.dir), `${basename(o.dir)}.probe.mjs`);
  const eventFile = join(dirname(o.dir), `${basename(o.dir)}.event.json`);
  const warmEventsFile = join(dirname(o.dir), `${basename(o.dir)}.warm-events.json`);
  writeFileSync(probe, PROBE);
  writeFileSync(eventFile, JSON.stringify(o.event));
  writeFileSync(warmEventsFile, JSON.stringify(o.warmEvents ?? [o.event]));
  const result = await spawnProbe([probe, handlerFile, eventFile, warmEventsFile], {
    PATH: dirname(process.execPath),
    ...o.environment,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_REGION: LOCAL_REGION,
    AWS_DEFAULT_REGION: LOCAL_REGION,
    ...lambdaVariables(o.fn),
    LAMBDA_TASK_ROOT: o.dir,
    AWS_EC2_METADATA_DISABLED: 'true',
    TZ: 'UTC',
    PROBE_TIMEOUT_MS: String(o.timeoutMs ?? o.fn.timeoutSeconds * 1000),
  });
  return { ...result, bundleBytes: statSync(handlerFile).size };
};

interface Variant {
  readonly name: SdkVariant;
  readonly copy: StackCopy;
}

export const functionOf = (copy: StackCopy, output: string): LocalFunction => {
  const fn = copy.stack.functions.find((f) => f.name === copy.outputs[output]);
  if (!fn) throw new Error(`no function for ${output}`);
  return fn;
};

/** Warm invocations that bring the emulators to a steady state before a function's samples. */
export const DEFAULT_WARMUP_INVOCATIONS = 60;

/**
 * Medians over `samples` fresh processes per variant and function. `assemblies` are the same app
 * synthesized with `-c awsSdk=external` and `-c awsSdk=bundled`; `projectDir` lends the external
 * variant its `node_modules`.
 *
 * Before a function's samples, one discarded process per variant runs `warmupInvocations`
 * invocations of the same kind. A freshly started DynamoDB Local answers the same writes two to
 * three times slower for its first minute (its JVM still compiling), a cost AWS's always-warm
 * services do not have: unwarmed, it lands equally on both variants and hides their difference.
 */
export const measureColdStarts = async (options: {
  readonly endpoint: string;
  readonly assemblies: Readonly<Record<SdkVariant, string>>;
  readonly projectDir: string;
  readonly samples: number;
  /** Default {@link DEFAULT_WARMUP_INVOCATIONS}. */
  readonly warmupInvocations?: number;
  readonly onSample?: (done: number, total: number) => void;
}): Promise<Record<string, FunctionColdStart>> => {
  const warmups = options.warmupInvocations ?? DEFAULT_WARMUP_INVOCATIONS;
  const work = mkdtempSync(join(tmpdir(), 'onceflow-cold-'));
  try {
    const variants: Variant[] = [];
    for (const name of SDK_VARIANTS) {
      variants.push({
        name,
        copy: await provisionStackCopy({
          assemblyDir: options.assemblies[name],
          endpoint: options.endpoint,
          name: unique(`cold-${name}`),
        }),
      });
    }
    const functions = [
      {
        name: 'IngestOrders',
        output: 'IngestFunctionName',
        env: (c: StackCopy) => c.ingestEnvironment,
      },
      {
        name: 'AggregateHours',
        output: 'AggregateFunctionName',
        env: (c: StackCopy) => c.aggregateEnvironment,
      },
    ];
    const total = functions.length * variants.length * options.samples;
    let done = 0;
    const results: Record<string, FunctionColdStart> = {};
    for (const f of functions) {
      const samples: Record<SdkVariant, FreshRun[]> = {
        external: [],
        bundled: [],
      };
      const bytes: Record<SdkVariant, number> = { external: 0, bundled: 0 };
      let memoryMb = 0;
      // Batches of their own: samples 0…n-1 first, n…2n-1 warm, 2n… the warm-up's.
      const sample = (v: Variant, name: string, first: number, warm: readonly number[]) => {
        const dir = join(work, `${f.name}-${v.name}-${name}`);
        mkdirSync(dir);
        const fn = functionOf(v.copy, f.output);
        memoryMb = fn.memoryMb;
        return runFresh({
          fn,
          environment: f.env(v.copy),
          event: firstEvent(f.name, v.copy, first),
          // Fresh batches (ingest), the same hour again (aggregate): the same work.
          warmEvents: warm.map((sample) => firstEvent(f.name, v.copy, sample)),
          dir,
          ...(v.name === 'external'
            ? { runtimeModules: join(options.projectDir, 'node_modules') }
            : {}),
        });
      };
      for (const v of variants) {
        const from = 2 * options.samples;
        await sample(
          v,
          'warm-up',
          from,
          Array.from({ length: warmups }, (_, k) => from + 1 + k),
        );
      }
      for (let i = 0; i < options.samples; i++) {
        for (const v of variants) {
          const run = await sample(v, String(i), i, [i + options.samples]);
          samples[v.name].push(run);
          bytes[v.name] = run.bundleBytes;
          options.onSample?.(++done, total);
        }
      }
      const summary = (v: SdkVariant): ColdStart => ({
        bundleBytes: bytes[v],
        ...medianColdPath(samples[v]),
      });
      const external = summary('external');
      const bundled = summary('bundled');
      const path = (c: ColdStart) => c.initMs + c.firstInvokeMs;
      const overhead = (c: ColdStart) => Math.max(0, path(c) - c.warmInvokeMs);
      results[f.name] = {
        external,
        bundled,
        faster: path(bundled) <= path(external) ? 'bundled' : 'external',
        bundledOverExternal: Number((path(bundled) / path(external)).toFixed(2)),
        bundledOverExternalColdOverhead: Number(
          (overhead(bundled) / Math.max(1e-9, overhead(external))).toFixed(2),
        ),
        memoryMb,
      };
    }
    return results;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
};

/**
 * The first invocation's event: a fresh batch of 50 events (its own id, orders and events, so
 * every sample takes the clean applying path), or the hour those batches wrote.
 */
export const firstEvent = (fn: string, copy: StackCopy, sample: number) => {
  const stream = generateStream({ orders: 25, hours: 1, seed: 1000 + sample, batchSize: 50 });
  const [batch] = stream.batches;
  if (!batch) throw new Error('the generator made no batch');
  // Each seed's stream has orders and events of its own (the generator tags its ids).
  const body =
    fn === 'IngestOrders'
      ? JSON.stringify({ ...batch, batchId: unique('cold'), source: 'bench' })
      : JSON.stringify({ hour: '2026-10-01T00:00:00Z' });
  const queue = fn === 'IngestOrders' ? copy.queues.orders : copy.queues.aggregate;
  return toSqsEvent([
    toSqsRecord(
      { MessageId: unique('m'), ReceiptHandle: unique('r'), Body: body },
      queue.arn,
      LOCAL_REGION,
    ),
  ]);
};
