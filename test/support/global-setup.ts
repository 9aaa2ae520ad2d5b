import type { TestProject } from 'vitest/node';
import { startEmulators } from '../../local/emulators.ts';
import { synthAssembly } from './assembly.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    endpoint: string;
    /** The onceflow stack, synthesized once for the whole run. */
    assembly: { assemblyDir: string; stackName: string };
  }
}

/**
 * One set of emulators and one synthesized stack for the whole run; every test provisions its
 * own copy of the stack (queues, table, bucket) from that template.
 */
export default async function setup(project: TestProject) {
  const assembly = synthAssembly();
  const emulators = await startEmulators();
  project.provide('endpoint', emulators.endpoint);
  project.provide('assembly', { assemblyDir: assembly.assemblyDir, stackName: assembly.stackName });
  return async () => {
    await emulators.stop();
    assembly.remove();
  };
}
