/** `onceflow drain`: waits until both queues are empty with nothing in flight. */
import type { Command } from 'commander';
import { drainQueues } from '../../local/drain.ts';
import { WaitTimeoutError } from '../../local/net.ts';
import { number, run, target } from '../program.ts';
import { CliError, type Target } from '../target.ts';
import { QUEUE_FUNCTIONS } from './logs.ts';
import { triggerReport } from './trigger.ts';

/**
 * Why a queue cannot drain, when its trigger says so: `: aggregate's trigger is missing (…)`.
 * Only a hint on a timeout: a role that cannot read Lambda's API still gets the timeout itself.
 */
const stalled = async (t: Target): Promise<string> => {
  const report = await triggerReport(t).catch(() => undefined);
  const reasons = QUEUE_FUNCTIONS.flatMap((fn) => {
    const state = report?.states[fn];
    if (state === undefined || state === 'Enabled') return [];
    return state === 'none'
      ? [`${fn}'s trigger is missing (\`onceflow check --fix\` creates it as deployed)`]
      : [`${fn}'s trigger is ${state} (\`onceflow resume ${fn}\`)`];
  });
  return reasons.length > 0 ? `: ${reasons.join('; ')}` : '';
};

export const register = (program: Command): void => {
  program
    .command('drain')
    .description(
      'wait until both queues are empty with nothing in flight (every dirty hour written)',
    )
    .option('--timeout <seconds>', 'give up after this long', number('seconds', 1), 120)
    .addHelpText('after', '\nExample:\n  npx onceflow drain --timeout 60')
    .action(
      run(async (o: { timeout: number }) => {
        const t = await target();
        const started = Date.now();
        try {
          await drainQueues(
            t.clients.sqs,
            [t.output('OrdersQueueUrl'), t.output('AggregateQueueUrl')],
            { timeoutMs: o.timeout * 1000 },
          );
        } catch (error) {
          if (error instanceof WaitTimeoutError)
            throw new CliError(
              `the queues did not drain within ${o.timeout} s${await stalled(t)} (see \`onceflow status\`)`,
              { cause: error },
            );
          throw new CliError(
            `could not read the queues' depth: ${error instanceof Error ? error.message : String(error)}`,
            { cause: error },
          );
        }
        console.log(`drained in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        return 0;
      }),
    );
};
