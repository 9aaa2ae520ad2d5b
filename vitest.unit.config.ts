import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * `npm run test:unit`: the pure tests only (schemas, planning, money and time, packing, the
 * limits property test), with no JVM and no emulator: a few seconds. `npm test` runs everything.
 */
export default defineConfig({
  ...base,
  test: { ...base.test, include: ['test/unit/**/*.test.ts'], globalSetup: [] },
});
