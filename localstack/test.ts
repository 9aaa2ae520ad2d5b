/**
 * `npm run test:localstack`: deploys the stack to LocalStack at LOCALSTACK_ENDPOINT (skip with
 * SKIP_DEPLOY=1), then runs the deployed-pipeline suite against it. Without LOCALSTACK_ENDPOINT
 * it says that it did not run.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const endpoint = process.env.LOCALSTACK_ENDPOINT;
if (!endpoint) {
  console.log(
    'test:localstack did not run: set LOCALSTACK_ENDPOINT (e.g. http://localhost:4566) with LocalStack up.',
  );
  process.exit(0);
}
const project = join(import.meta.dirname, '..');
const bin = (name: string) => join(project, 'node_modules', '.bin', name);
const env = {
  ...process.env,
  AWS_ENDPOINT_URL: endpoint,
  AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? 'test',
  AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? 'test',
  AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
};
const run = (command: string, args: string[]) => {
  console.log(`▸ ${command.split('/').pop()} ${args.join(' ')}`);
  const result = spawnSync(command, args, { cwd: project, env, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
};
if (process.env.SKIP_DEPLOY !== '1') {
  run(bin('cdklocal'), ['bootstrap']);
  run(bin('cdklocal'), ['deploy', '--require-approval', 'never']);
}
run(bin('vitest'), ['run', '--config', 'vitest.localstack.config.ts']);
