/** `onceflow local up`: the local stack in the foreground. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Command } from 'commander';
import { globals, run } from '../program.ts';

export const register = (program: Command): void => {
  program
    .command('local')
    .description('the local stack')
    .command('up')
    .description('run the stack locally until Ctrl-C (same as `npm start -- --keep --no-demo`)')
    .option('--port <port>', 'edge port, taken when free', '4566')
    .option('--demo', 'run the demo first')
    .addHelpText('after', '\nExample:\n  npx onceflow local up')
    .action(
      run(
        (o: { port: string; demo?: boolean }) =>
          new Promise<number>((resolve) => {
            const args = [
              join(import.meta.dirname, '..', '..', 'local', 'start.ts'),
              '--keep',
              '--port',
              o.port,
              '--state',
              globals().localState,
            ];
            if (!o.demo) args.push('--no-demo');
            const child = spawn(process.execPath, args, { stdio: 'inherit' });
            for (const signal of ['SIGINT', 'SIGTERM'] as const)
              process.on(signal, () => child.kill(signal));
            child.once('exit', (code) => resolve(code ?? 1));
          }),
      ),
    );
};
