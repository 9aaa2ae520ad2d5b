import { afterAll, beforeAll, inject } from 'vitest';
import { type EmulatorOptions, type Emulators, startEmulators } from '../../local/emulators.ts';

/**
 * Emulators of the test file's own (for a local runtime, which takes over the edge's hooks):
 * started before its tests, stopped after. Call at the top of a file or describe block. They
 * run on the suite's DynamoDB Local (see `sharedDynamoLocal`).
 */
export const useEmulators = (
  options: Omit<EmulatorOptions, 'dynamoLocal'> = {},
): (() => Emulators) => {
  let emulators: Emulators | undefined;
  beforeAll(async () => {
    emulators = await startEmulators({ ...options, dynamoLocal: sharedDynamoLocal() });
  });
  afterAll(async () => {
    await emulators?.stop();
  });
  return () => {
    if (!emulators) throw new Error('useEmulators(): the emulators have not started');
    return emulators;
  };
};

/**
 * The suite's one DynamoDB Local (global-setup.ts), for emulators and runtimes a test file starts
 * for itself: every test provisions tables of its own, so they need no JVM of their own.
 */
export const sharedDynamoLocal = () => inject('dynamoLocal');
