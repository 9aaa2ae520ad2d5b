/** `onceflow send`: lines of a file to the orders queue, packed by size. */
import type { Command } from 'commander';
import { queueMessageLimit, sendBodies } from '../../adapters/sqs.ts';
import { counted } from '../../local/render.ts';
import { bodyLines, readInput } from '../input.ts';
import { inFlightOption, paceOf, progress, rateOption, run, target } from '../program.ts';
import type { Target } from '../target.ts';

export interface SendOptions {
  /** Messages per second at most; undefined: as fast as possible. */
  readonly rate?: number;
  readonly onProgress?: (sent: number, total: number) => void;
  /** SendMessageBatch requests in flight; default 1, in the file's order (see sendBodies). */
  readonly inFlight?: number;
}

/**
 * Sends each line as one message body, packed by size into as few requests as SQS allows. A
 * body the queue can never take is reported (1-based line number and why); the rest still go.
 */
export const sendLines = async (
  target: Target,
  lines: readonly string[],
  options: SendOptions = {},
) => {
  const queueUrl = target.output('OrdersQueueUrl');
  const { sent, refused } = await sendBodies(target.clients.sqs, queueUrl, lines, {
    maxMessageBytes: await queueMessageLimit(target.clients.sqs, queueUrl),
    ...options,
  });
  return { sent, refused: refused.map((r) => ({ line: r.index + 1, reason: r.reason })) };
};

export const register = (program: Command): void => {
  program
    .command('send')
    .description('send each line of an NDJSON file as one SQS message body to the orders queue')
    .argument('<file>', 'NDJSON file, one order batch (or any body) per line; - for stdin')
    .addOption(rateOption())
    .addOption(inFlightOption())
    .addHelpText(
      'after',
      '\nExample:\n  npx onceflow send test/fixtures/seed-orders/batches.ndjson --rate 50\n' +
        '  npx onceflow send batches.ndjson --in-flight 8',
    )
    .action(
      run(async (file: string, options: { rate?: number; inFlight?: number }) => {
        const { bodies, lineOf } = bodyLines(readInput(file));
        const t = await target();
        const bar = progress('sending');
        const { sent, refused } = await sendLines(t, bodies, {
          ...paceOf(options),
          onProgress: bar.update,
        });
        bar.stop();
        console.log(`sent ${counted(sent, 'message')} to ${t.output('OrdersQueueUrl')}`);
        for (const r of refused)
          console.error(`line ${lineOf[r.line - 1] ?? r.line} was not sent: ${r.reason}`);
        return refused.length > 0 ? 1 : 0;
      }),
    );
};
