import type { TestProject } from 'vitest/node';
import { startEmulators } from '../../local/emulators.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    endpoint: string;
  }
}

/** One set of emulators for the whole run; every test creates its own table, bucket and queues. */
export default async function setup(project: TestProject) {
  const emulators = await startEmulators();
  project.provide('endpoint', emulators.endpoint);
  return () => emulators.stop();
}
