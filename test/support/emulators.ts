import { afterAll, beforeAll } from 'vitest';
import { type Emulators, startEmulators } from '../../local/emulators.ts';

/**
 * Emulators of the test file's own (for a local runtime, which takes over the edge's hooks):
 * started before its tests, stopped after. Call at the top of a file or describe block.
 */
export const useEmulators = (): (() => Emulators) => {
  let emulators: Emulators | undefined;
  beforeAll(async () => {
    emulators = await startEmulators();
  });
  afterAll(async () => {
    await emulators?.stop();
  });
  return () => {
    if (!emulators) throw new Error('useEmulators(): the emulators have not started');
    return emulators;
  };
};
