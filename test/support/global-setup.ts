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
  const assembly = synthAssembly();
  const emulators = await startEmulators();
  project.provide('endpoint', emulators.endpoint);
  project.provide('dynamoLocal', emulators.dynamoLocal);
  project.provide('assembly', { assemblyDir: assembly.assemblyDir, stackName: assembly.stackName });
  return async () => {
    await emulators.stop();
    assembly.remove();
  };
}
