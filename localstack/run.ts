/**
 * `npm run deploy:localstack` and `npm run test:localstack`: cdklocal and the deployed-pipeline
 * suite against LocalStack at LOCALSTACK_ENDPOINT (default http://localhost:4566).
 *
 *   node localstack/run.ts deploy   bootstrap + deploy
 *   node localstack/run.ts test     deploy (skip with SKIP_DEPLOY=1), then the suite
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { localstackAnswers, localstackEnvironment } from './env.ts';

const mode = process.argv[2];
if (mode !== 'deploy' && mode !== 'test') {
  console.error('usage: node localstack/run.ts deploy|test');
  process.exit(2);
}
const env = localstackEnvironment(process.env);
const endpoint = env.LOCALSTACK_ENDPOINT ?? '';
if (!(await localstackAnswers(endpoint))) {
  console.error(
    `✘ no LocalStack answers at ${endpoint}: start it (docker compose -f localstack/docker-compose.yml up -d) ` +
      'or set LOCALSTACK_ENDPOINT. Without Docker, `npm test` runs everything on the embedded emulators.',
  );
  process.exit(1);
}
const project = join(import.meta.dirname, '..');
const bin = (name: string) => join(project, 'node_modules', '.bin', name);
const run = (command: string, args: string[]) => {
  console.log(`▸ ${command.split('/').pop()} ${args.join(' ')}   (endpoint ${endpoint})`);
  const result = spawnSync(command, args, { cwd: project, env, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
};
if (mode === 'deploy' || process.env.SKIP_DEPLOY !== '1') {
  run(bin('cdklocal'), ['bootstrap']);
  run(bin('cdklocal'), ['deploy', '--require-approval', 'never']);
}
if (mode === 'test') run(bin('vitest'), ['run', '--config', 'vitest.localstack.config.ts']);
