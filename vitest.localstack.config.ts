import { defineConfig } from 'vitest/config';

/** `npm run test:localstack`: the deployed-pipeline suite against LOCALSTACK_ENDPOINT. */
export default defineConfig({
  test: {
    include: ['test/localstack/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
