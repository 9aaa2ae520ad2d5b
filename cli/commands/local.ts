/** `onceflow local up|endpoint`: the local stack in the foreground, and where it listens. */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_READ_LAG_MS } from '../../local/eventual-reads.ts';
import { globals, run } from '../program.ts';
import { runningLocalState } from '../target.ts';

export const register = (program: Command): void => {
  const local = program.command('local').description('the local stack');
  local
    .command('up')
    .description('run the stack locally until Ctrl-C (same as `npm start -- --keep --no-demo`)')
    .option('--port <port>', 'edge port, taken when free', '4566')
    .option('--demo', 'run the demo first')
    .option('--persist', 'keep tables, queues (with messages) and the bucket across restarts')
    .option('--watch', 'swap in the functions’ new code as their sources change')
    .option(
      '--read-lag <ms>',
      `how stale DynamoDB’s eventually consistent reads may be, as on AWS (0: always fresh); default ${DEFAULT_READ_LAG_MS}`,
    )
    .addHelpText(
      'after',
      '\nExamples:\n  npx onceflow local up\n  npx onceflow local up --persist\n  npx onceflow local up --watch',
    )
    .action(
      run(
        (o: {
          port: string;
          demo?: boolean;
          persist?: boolean;
          watch?: boolean;
          readLag?: string;
        }) =>
          new Promise<number>((resolve) => {
            const state = globals().localState;
            const args = [
              join(import.meta.dirname, '..', '..', 'local', 'start.mjs'),
              '--keep',
              '--port',
              o.port,
              '--state-dir',
              dirname(state),
              '--state',
              state,
            ];
            if (!o.demo) args.push('--no-demo');
            if (o.persist) args.push('--persist');
            if (o.watch) args.push('--watch');
            if (o.readLag !== undefined) args.push('--read-lag', o.readLag);
            const child = spawn(process.execPath, args, { stdio: 'inherit' });
            for (const signal of ['SIGINT', 'SIGTERM'] as const)
              process.on(signal, () => child.kill(signal));
            child.once('exit', (code) => resolve(code ?? 1));
          }),
      ),
    );
  local
    .command('endpoint')
    .description('print the running local stack’s endpoint (for scripts and other clients)')
    .option('--env', 'print shell exports instead: endpoint, region and credentials')
    .addHelpText(
      'after',
      '\nExamples:\n  aws --endpoint-url "$(npx onceflow local endpoint)" sqs list-queues\n  eval "$(npx onceflow local endpoint --env)" && aws sqs list-queues',
    )
    .action(
      run(async (o: { env?: boolean }) => {
        const state = runningLocalState(globals().localState);
        if (!o.env) {
          console.log(state.endpoint);
          return 0;
        }
        const exports = {
          AWS_ENDPOINT_URL: state.endpoint,
          AWS_REGION: state.region,
          AWS_DEFAULT_REGION: state.region,
          AWS_ACCESS_KEY_ID: state.credentials.accessKeyId,
          AWS_SECRET_ACCESS_KEY: state.credentials.secretAccessKey,
        };
        for (const [name, value] of Object.entries(exports))
          console.log(`export ${name}='${value.replaceAll("'", `'\\''`)}'`);
        return 0;
      }),
    );
};
