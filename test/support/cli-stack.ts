/**
 * What the CLI's test files share: emulators of the file's own on the run's DynamoDB Local, a
 * fresh copy of the stack per test, and the CLI bound to it as `--target local`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import { afterAll, beforeAll, inject } from 'vitest';
import { type Emulators, startEmulators } from '../../local/emulators.ts';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { onceflow, ROOT, recordState as recordStateIn } from './cli.ts';
import { sharedDynamoLocal } from './emulators.ts';
import { stateViews, uniqueName } from './pipeline.ts';

export const SEED = join(ROOT, 'test', 'fixtures', 'seed-orders', 'batches.ndjson');

/** What these tests read of `status --json` and `rejects --json`. */
export const StatusSchema = v.object({
  ledger: v.unknown(),
  queues: v.array(v.object({ name: v.string(), visible: v.number() })),
});
/** What these tests read of `aggregates --json`. */
export const HoursSchema = v.array(v.object({ hour: v.string() }));
export const RejectsSchema = v.array(
  v.object({ reason: v.string(), detail: v.string(), body: v.string() }),
);

export const essence = (hours: { hour: string; events: number; byStatus: unknown }[]) =>
  hours.map(({ hour, events, byStatus }) => ({ hour, events, byStatus }));

/**
 * Starts the file's emulators before its tests and stops them after; returns the file's
 * temporary directory (state files, logs, bodies to send) and a maker of stacks.
 */
export const useCliStacks = () => {
  let emulators: Emulators | undefined;
  const assembly = inject('assembly');
  const dir = mkdtempSync(join(tmpdir(), 'onceflow-cli-'));
  beforeAll(async () => {
    emulators = await startEmulators({ dynamoLocal: sharedDynamoLocal() });
  });
  afterAll(async () => {
    await emulators?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const recordState = (runtime: LocalRuntime) => recordStateIn(runtime, dir);

  /** A fresh copy of the stack on the file's emulators, and a CLI bound to it. */
  const stack = async () => {
    if (!emulators) throw new Error('the emulators start before the first test');
    const runtime: LocalRuntime = await startLocalRuntime({
      assemblyDir: assembly.assemblyDir,
      stackName: assembly.stackName,
      localStackName: uniqueName('cli'),
      emulators,
      retryDelaySeconds: 1,
      // Where `onceflow logs` looks: beside the state file, as `npm start` writes them.
      logDir: join(dir, 'logs'),
    });
    const state = recordState(runtime);
    const cli = (...args: string[]) => onceflow(['--local-state', state, ...args]);
    const { outputs } = runtime.stack;
    const views = stateViews(runtime.clients, outputs.TableName ?? '', outputs.BucketName ?? '');
    return { runtime, state, cli, outputs, views, [Symbol.asyncDispose]: () => runtime.stop() };
  };

  return { dir, assembly, recordState, stack };
};
