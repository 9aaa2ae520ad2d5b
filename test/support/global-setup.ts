import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import type { RunningDynamoLocal } from '../../local/dynamodb-local.ts';
import { startEmulators } from '../../local/emulators.ts';
import { synthAssembly } from './assembly.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    endpoint: string;
    /** The onceflow stack, synthesized once for the whole run. */
    assembly: { assemblyDir: string; stackName: string };
    /**
     * The run's one DynamoDB Local, for test files that start emulators of their own (an edge
     * and fauxqs for their runtime's hooks) without a JVM of their own.
     */
    dynamoLocal: RunningDynamoLocal;
  }
}

/**
 * One set of emulators and one synthesized stack for the whole run; every test provisions its
 * own copy of the stack (queues, table, bucket) from that template. Its DynamoDB Local serves
 * the files' own emulators too: each JVM started costs seconds of CPU and runs slowly until its
 * compiler has warmed up, and the suite is CPU-bound.
 */
export default async function setup(project: TestProject) {
  // The run's own temporary directory, removed at its end: what the tests make there (state,
  // events, assemblies, CDK's output directories) and what the processes they start write there
  // (`TMPDIR`, which `os.tmpdir()` reads at each call and the test workers and their children
  // inherit) leave nothing behind in the system's (before, about 70 directories and 34 MB a run).
  // One for the run rather than one a file: the AWS CDK keeps the first it is given.
  const system = tmpdir();
  const runTmp = mkdtempSync(join(system, 'onceflow-test-'));
  process.env.TMPDIR = runTmp;
  const removeRunTmp = () => {
    process.env.TMPDIR = system;
    rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
  };
  let assembly: ReturnType<typeof synthAssembly> | undefined;
  let emulators: Awaited<ReturnType<typeof startEmulators>>;
  try {
    assembly = synthAssembly();
    emulators = await startEmulators();
  } catch (error) {
    // A run that cannot start leaves nothing behind either (vitest runs no teardown then).
    assembly?.remove();
    removeRunTmp();
    throw error;
  }
  project.provide('endpoint', emulators.endpoint);
  project.provide('dynamoLocal', emulators.dynamoLocal);
  project.provide('assembly', { assemblyDir: assembly.assemblyDir, stackName: assembly.stackName });
  return async () => {
    await emulators.stop();
    assembly?.remove();
    removeRunTmp();
  };
}
