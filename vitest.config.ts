import { defineConfig } from 'vitest/config';
import DurationSequencer from './test/support/sequencer.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Needs a deployed stack: `npm run test:localstack`.
    exclude: ['test/localstack/**', 'node_modules/**'],
    globalSetup: ['test/support/global-setup.ts'],
    // The files share their worker's modules rather than each loading the AWS SDK, fauxqs and
    // the harness afresh in a process of its own: on 2026-12-07, 578 s (936 s of CPU) against
    // 700 s (1,184 s) isolated, in the same hour. Each file still makes its own resources, and
    // a file that leaves anything running fails (`test/support/nothing-left-running.ts`).
    isolate: false,
    setupFiles: ['test/support/nothing-left-running.ts'],
    // An environment variable or global a test stubs is put back after it.
    unstubEnvs: true,
    unstubGlobals: true,
    // Sized for a 2-core machine at load 10: a scenario of 15 s alone may take minutes there.
    // Tests wait on observed state with deadlines (test/support/deadlines.ts), never on time.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    // Two cores, one for the emulators; a third worker fills the time tests spend waiting on
    // the aggregate queue's delay (the coalescing window), not on a core.
    maxWorkers: 3,
    // Longest files first, on a fresh clone too (test/durations.json).
    sequence: { sequencer: DurationSequencer },
    env: {
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
      POWERTOOLS_SERVICE_NAME: 'onceflow',
      POWERTOOLS_METRICS_NAMESPACE: 'onceflow',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      // The SDK v2 is here as a legacy SQS query-protocol client; its notice says nothing new.
      AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: '1',
    },
  },
});
