/**
 * `npm start`: synthesizes the stack (unless cdk.out is fresh), runs it on the embedded
 * emulators and runs the demo. `npm start -- --keep` keeps it running for the CLI, the AWS CLI
 * and any SDK (endpoints in .onceflow/local.json) until Ctrl-C; `--persist` keeps its data
 * across restarts. One runtime per state directory.
 */
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { SingleBar } from 'cli-progress';
import { Command, InvalidArgumentError } from 'commander';
import * as v from 'valibot';
import { FinalizerRunSchema } from '../shared/finalizer.ts';
import { alarmId } from './alarms.ts';
import { runDemo } from './demo.ts';
import { JavaMissingError } from './dynamodb-local.ts';
import { LOCAL_CREDENTIALS } from './emulators.ts';
import { DEFAULT_READ_LAG_MS } from './eventual-reads.ts';
import { FauxqsPersistenceError } from './fauxqs-store.ts';
import { claimInstance, type InstanceClaim, InstanceRunningError } from './instance.ts';
import { KeptDataMismatchError } from './provision-table.ts';
import { describeFinalizerRun } from './render.ts';
import { type LocalRuntime, startLocalRuntime } from './runtime.ts';
import { nextRun } from './schedule-expression.ts';
import { nextSchedulerRun } from './scheduler.ts';
import { readLocalState, writeLocalState } from './state.ts';
import { assemblyIsFresh, SOURCES, synthesize } from './synth.ts';
import { UnknownStackError } from './template.ts';
import { describeWatchEvent, type WatchEvent, watchStack } from './watch.ts';

const PROJECT = join(import.meta.dirname, '..');

const port = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError('a port number (0 for any)');
  return n;
};

const seconds = (value: string) => {
  const n = Number(value);
  // SQS allows visibility timeouts up to 12 hours.
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 43_200)
    throw new InvalidArgumentError('a number of seconds from 0 to 43200');
  return n;
};

const milliseconds = (value: string) => {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > 60_000)
    throw new InvalidArgumentError('a number of milliseconds from 0 to 60000');
  return n;
};

const program = new Command('npm start --')
  .description(
    'Run the synthesized onceflow stack locally (no Docker, no AWS account) and demo it.',
  )
  .option('--keep', 'keep the stack running after the demo (until Ctrl-C)')
  .option('--no-demo', 'skip the demo (with --keep: just run the stack)')
  .option('--port <port>', 'edge port, taken when free (else another)', port, 4566)
  .option('--stack <name>', 'stack to run, when the app has several')
  .option('--assembly <dir>', 'run this cloud assembly instead of synthesizing cdk.out')
  .option(
    '--state-dir <dir>',
    'where this runtime keeps its state file, logs and (--persist) data; one runtime per directory',
    join(PROJECT, '.onceflow'),
  )
  .option('--state <file>', 'where --keep writes the endpoints (default <state-dir>/local.json)')
  .option('--persist', 'keep tables, queues (with messages) and the bucket across restarts')
  .option(
    '--watch',
    'keep running and swap in the functions’ new code as their sources change (or, with --assembly, as it is synthesized again)',
  )
  .option(
    '--retry-delay <seconds>',
    'failed messages come back after this many seconds instead of the visibility timeout',
    seconds,
    1,
  )
  .option(
    '--read-lag <ms>',
    'how stale DynamoDB’s eventually consistent reads may be (as on AWS); 0: always fresh, as DynamoDB Local',
    milliseconds,
    DEFAULT_READ_LAG_MS,
  )
  .addHelpText(
    'after',
    '\nExamples:\n  npm start\n  npm start -- --keep --persist\n  npm start -- --watch --no-demo\n  npm start -- --keep --no-demo --port 4570 --state-dir /tmp/onceflow-b',
  );
program.parse();
const options = program.opts<{
  keep?: boolean;
  demo: boolean;
  port: number;
  stack?: string;
  assembly?: string;
  stateDir: string;
  state?: string;
  persist?: boolean;
  watch?: boolean;
  retryDelay: number;
  readLag: number;
}>();
// Watching a stack that stops after its demo would watch nothing.
const keep = options.keep === true || options.watch === true;
const stateDir = resolve(options.stateDir);
const stateFile = options.state ?? join(stateDir, 'local.json');
const dataDir = join(stateDir, 'data');

const step = async <T>(label: string, work: () => Promise<T>): Promise<T> => {
  const started = Date.now();
  process.stdout.write(`▸ ${label}… `);
  const result = await work();
  process.stdout.write(`done (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  return result;
};

/** Whether the stack's table holds anything (a kept stack from an earlier run). */
const holdsData = async (r: LocalRuntime): Promise<boolean> => {
  const table = r.stack.tables[0]?.name;
  if (!table) return false;
  const page = await r.clients.dynamo.send(
    new ScanCommand({ TableName: table, Limit: 1, ConsistentRead: true }),
  );
  return (page.Count ?? 0) > 0;
};

const assemblyDir = options.assembly ?? join(PROJECT, 'cdk.out');
let runtime: LocalRuntime | undefined;
let claim: InstanceClaim | undefined;
let watcher: { close(): void } | undefined;
let stopping = false;
const stop = async (code: number) => {
  if (stopping) return;
  stopping = true;
  watcher?.close();
  // The state file is removed only by the runtime that wrote it.
  const state = readLocalState(stateFile);
  if (keep && state.ok && state.state.pid === process.pid) rmSync(stateFile, { force: true });
  await runtime?.stop().catch(() => undefined);
  claim?.release();
  process.exit(code);
};
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

try {
  claim = await claimInstance(stateDir);
  if (assemblyIsFresh(PROJECT, assemblyDir))
    console.log('▸ cdk.out is up to date with infra/ and functions/');
  else await step('synthesizing the CDK app', () => synthesize(PROJECT, assemblyDir));
  runtime = await step(
    'starting DynamoDB Local, fauxqs and the edge; provisioning from the template',
    () =>
      startLocalRuntime({
        assemblyDir,
        ...(options.stack ? { stackName: options.stack } : {}),
        port: options.port,
        retryDelaySeconds: options.retryDelay,
        readLagMs: options.readLag,
        logDir: join(stateDir, 'logs'),
        ...(options.persist ? { dataDir } : {}),
        warn: (message) => console.warn(`! ${message}`),
        // What scheduled rules do as they run (the finalizer's hours, a failing run).
        onScheduled: (fn, outcome) => {
          if (outcome.error)
            console.warn(
              `! ${fn.logicalId} failed: ${outcome.error.message}${
                outcome.retryAtMs === undefined
                  ? ''
                  : ` (Lambda retries it at ${new Date(outcome.retryAtMs).toISOString()})`
              }`,
            );
          const run = v.safeParse(FinalizerRunSchema, outcome.result);
          if (run.success && (run.output.finalized.length > 0 || run.output.heldBy))
            console.log(`  ${describeFinalizerRun(run.output)}`);
        },
        // A dead emulator cannot be replaced without losing what it held: say so and stop.
        onFailure: (message) => {
          console.error(
            `\n✘ ${message}: the local runtime cannot work without it and stops` +
              `${options.persist ? ` (data written so far is in ${dataDir})` : ''}.`,
          );
          void stop(1);
        },
      }),
  );
  claim.publish(runtime.endpoint);
  const { stack } = runtime;
  const edgePort = Number(new URL(runtime.endpoint).port);
  if (options.port !== 0 && edgePort !== options.port)
    console.log(`! port ${options.port} is taken: the edge listens on ${edgePort} instead`);
  console.log(
    `  ${stack.stackName} on ${runtime.endpoint}: ${stack.queues.length} queues, ${stack.tables.length} table, ${stack.buckets.length} bucket, ` +
      `${stack.mappings.length} event source mappings (failed messages retry after ${options.retryDelay} s), ${stack.alarms.length} alarms`,
  );
  if (stack.notEmulated.length > 0)
    console.log(`  not emulated: ${[...new Set(stack.notEmulated)].sort().join(', ')}`);
  if (stack.schedules.length > 0) {
    const now = Date.now();
    const when = (r: (typeof stack.schedules)[number]) => {
      const next = r.enabled ? nextRun(r.expression, now, now) : undefined;
      return next === undefined
        ? 'not running'
        : `next ${new Date(next).toISOString().slice(11, 19)}`;
    };
    console.log(
      `  scheduled rules (UTC): ${stack.schedules
        .map(
          (r) =>
            `${r.functionLogicalId.replace(/Function[0-9A-F]{8}$/, '')} ${r.expression.text} (${when(r)})`,
        )
        .join(', ')}`,
    );
  }
  if (stack.schedulerSchedules.length > 0) {
    const now = Date.now();
    const described = stack.schedulerSchedules.map((sch) => {
      const next = sch.enabled ? nextSchedulerRun(sch, now, now) : undefined;
      const zone = sch.timeZone === 'UTC' ? '' : ` in ${sch.timeZone}`;
      return `${sch.name} ${sch.expression.text}${zone} (${next === undefined ? 'not running' : `next ${new Date(next).toISOString()}`})`;
    });
    console.log(`  Scheduler schedules: ${described.join(', ')}`);
  }
  for (const line of stack.notRun) console.log(`  not run locally: ${line}`);
  for (const line of stack.differences) console.log(`  runs differently locally: ${line}`);
  for (const line of stack.cautions) console.log(`! caution: ${line}`);
  console.log(
    options.persist
      ? `  data kept in ${dataDir} across restarts (delete it to start afresh)`
      : '  data lives in memory and is discarded on stop (--persist keeps it)',
  );
  let ok = true;
  // The demo checks its results against the expected files: it needs an empty stack.
  const kept = options.persist && options.demo && (await holdsData(runtime));
  if (kept)
    console.log(
      '  demo skipped: the kept stack already holds data (run `npm start` without --persist to see it)',
    );
  if (options.demo && !kept) {
    const bar = process.stdout.isTTY
      ? new SingleBar({
          format: '  processing |{bar}| {value}/{total} messages settled',
          hideCursor: true,
        })
      : undefined;
    bar?.start(1, 0);
    const result = await runDemo(runtime, {
      print: (text) => console.log(text),
      progress: (settled, total) => {
        bar?.setTotal(total);
        bar?.update(settled);
      },
    }).finally(() => bar?.stop());
    ok = result.ok;
  }
  if (!keep) await stop(ok ? 0 : 1);
  else {
    writeLocalState(stateFile, {
      endpoint: runtime.endpoint,
      region: runtime.region,
      stackName: stack.stackName,
      outputs: { ...stack.outputs },
      credentials: { ...LOCAL_CREDENTIALS },
      pid: process.pid,
      startedAt: new Date().toISOString(),
      readLagMs: runtime.emulators.readLagMs,
    });
    console.log(
      `\nRunning. Endpoint ${runtime.endpoint} (every service), region ${runtime.region}, any credentials.`,
    );
    for (const [name, value] of Object.entries(stack.outputs))
      console.log(`  ${name.padEnd(22)} ${value}`);
    console.log(`\n  aws --endpoint-url ${runtime.endpoint} sqs list-queues`);
    console.log(`  npx onceflow status          (reads ${stateFile})`);
    console.log(
      '  npx onceflow check           (the settings its guarantees rest on; --fix puts back a hand edit)',
    );
    console.log('  npx onceflow local endpoint  (prints the endpoint, for scripts)');
    // An alarm entering or leaving ALARM, as the console shows it (not its first evaluation).
    runtime.emulators.alarms.onChange(({ record, from }) => {
      if (!record.alarm.AlarmName.startsWith(`${stack.stackName}-`)) return;
      const id = alarmId(record.logicalId ?? record.alarm.AlarmName);
      if (record.state === 'ALARM' || from === 'ALARM')
        console.log(
          `${record.state === 'ALARM' ? '!' : '✓'} alarm ${id}: ${from} → ${record.state}: ${record.reason}`,
        );
    });
    console.log(
      `\nCtrl-C stops everything${options.persist ? '; the data stays' : ' and discards the data'}.`,
    );
    if (options.watch) {
      const running = runtime;
      watcher = watchStack({
        assemblyDir,
        ...(options.assembly
          ? {}
          : {
              project: {
                dir: PROJECT,
                sources: SOURCES,
                synthesize: () => synthesize(PROJECT, assemblyDir),
              },
            }),
        runtime: running,
        report: (event: WatchEvent) => {
          const line = describeWatchEvent(event);
          if (event.kind.endsWith('-failed')) console.error(line);
          else console.log(line);
        },
      });
      console.log(
        options.assembly
          ? `Watching ${assemblyDir}: a new synthesis there swaps in the functions' code.`
          : `Watching ${SOURCES.join(', ')}: a change synthesizes again and swaps in the functions' code.`,
      );
    }
  }
} catch (error) {
  // Errors the user can act on are one line; anything else keeps its stack for a bug report.
  if (
    error instanceof JavaMissingError ||
    error instanceof UnknownStackError ||
    error instanceof InstanceRunningError ||
    error instanceof KeptDataMismatchError ||
    error instanceof FauxqsPersistenceError
  )
    console.error(`✘ ${error.message}`);
  else console.error(`✘ ${(error as Error).stack ?? error}`);
  await stop(1);
}
