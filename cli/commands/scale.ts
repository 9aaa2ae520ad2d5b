/**
 * `onceflow scale <ingest|aggregate>`: show or change how a queue-fed function's SQS trigger
 * invokes it: at most how many invocations at once (the mapping's `ScalingConfig`), and how
 * many messages each gets (batch size and batching window). Slowing a function down is the
 * gentler lever in an incident where its table or bucket is throttled: it keeps working, at a
 * pace they take, where `pause` stops it. Lambda checks the settings by its rules for SQS (a
 * batch over 10 needs a batching window; a FIFO queue takes neither); its refusal is printed.
 */
import {
  GetEventSourceMappingCommand,
  type GetEventSourceMappingCommandOutput,
  LambdaClient,
} from '@aws-sdk/client-lambda';
import { Argument, type Command } from 'commander';
import { waitFor } from '../../local/net.ts';
import { integer, number, run, target } from '../program.ts';
import { QUEUE_FUNCTIONS, type QueueFunction } from './logs.ts';
import { mappingUuids, updateMapping } from './trigger.ts';

interface ScaleOptions {
  readonly maxConcurrency?: number;
  readonly batchSize?: number;
  readonly batchingWindow?: number;
  readonly timeout: number;
}

type Mapping = GetEventSourceMappingCommandOutput;

/** `batch size 10 → 4, batching window 0 s, at most 10 → 2 at once (Enabled)`. */
const describe = (before: Mapping, after: Mapping) => {
  const change = (a: unknown, b: unknown) => (a === b ? `${b}` : `${a} → ${b}`);
  const cap = (m: Mapping) => m.ScalingConfig?.MaximumConcurrency ?? 'no maximum';
  return `batch size ${change(before.BatchSize, after.BatchSize)}, batching window ${change(
    before.MaximumBatchingWindowInSeconds ?? 0,
    after.MaximumBatchingWindowInSeconds ?? 0,
  )} s, concurrency ${change(cap(before), cap(after))} (${after.State ?? 'unknown'})`;
};

export const register = (program: Command): void => {
  program
    .command('scale')
    .description(
      "show or change how ingest's or the aggregator's SQS trigger invokes it: at most how many at once, and how many messages each; without options, show its settings",
    )
    .addArgument(new Argument('<function>', 'the function whose trigger').choices(QUEUE_FUNCTIONS))
    .option(
      '--max-concurrency <n>',
      'at most this many invocations at once (2–1000)',
      integer('invocations', 2, 1000),
    )
    .option(
      '--batch-size <n>',
      'messages per invocation (1–10,000; over 10 needs a batching window, a FIFO queue takes 10 at most)',
      integer('messages', 1, 10_000),
    )
    .option(
      '--batching-window <seconds>',
      'how long to gather a batch (0–300; a FIFO queue takes none)',
      integer('seconds', 0, 300),
    )
    .option('--timeout <seconds>', 'how long to wait for AWS', number('seconds', 1), 120)
    .addHelpText(
      'after',
      '\nTo slow a function down while what it writes to is throttled, rather than pause it.\n\nExample:\n  npx onceflow scale ingest --max-concurrency 2',
    )
    .action(
      run(async (fn: QueueFunction, o: ScaleOptions) => {
        const t = await target();
        const lambda = new LambdaClient(t.clientConfig ?? { region: t.region });
        const untilMs = Date.now() + o.timeout * 1000;
        const read = (UUID: string): Promise<Mapping> =>
          lambda.send(new GetEventSourceMappingCommand({ UUID }));
        const changes = {
          ...(o.batchSize === undefined ? {} : { BatchSize: o.batchSize }),
          ...(o.batchingWindow === undefined
            ? {}
            : { MaximumBatchingWindowInSeconds: o.batchingWindow }),
          ...(o.maxConcurrency === undefined
            ? {}
            : { ScalingConfig: { MaximumConcurrency: o.maxConcurrency } }),
        };
        for (const UUID of await mappingUuids(t, lambda, fn)) {
          const before = await read(UUID);
          if (Object.keys(changes).length > 0) {
            await updateMapping(
              lambda,
              { UUID, ...changes },
              {
                untilMs,
                onBusy: (reason) => console.error(`${fn}'s trigger is busy, waiting: ${reason}`),
              },
            );
            // AWS applies it in the background: Updating, then the state it had.
            await waitFor(async () => (await read(UUID)).State !== 'Updating', {
              timeoutMs: Math.max(0, untilMs - Date.now()),
              what: `${fn}'s trigger to apply its new settings`,
            });
          }
          console.log(`${fn}'s trigger ${UUID}: ${describe(before, await read(UUID))}`);
        }
        return 0;
      }),
    );
};
