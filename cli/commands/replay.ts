/** `onceflow replay dlq` and `replay archive`. */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { ListMessageMoveTasksCommand, StartMessageMoveTaskCommand } from '@aws-sdk/client-sqs';
import { type Command, Option } from 'commander';
import { S3Store } from '../../adapters/s3.ts';
import { queueDepth } from '../../adapters/sqs.ts';
import { RAW_PREFIX } from '../../shared/keys.ts';
import { hoursBetween } from '../../shared/time.ts';
import { progress, run, target } from '../program.ts';
import { CliError, type Target } from '../target.ts';
import type { Interval } from './interval.ts';
import { parseInterval } from './interval.ts';
import { sendLines } from './send.ts';

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type QueueName = 'orders' | 'aggregate';
const QUEUE_OUTPUTS: Record<QueueName, { source: string; dlq: string; dlqUrl: string }> = {
  orders: { source: 'OrdersQueueArn', dlq: 'OrdersDlqArn', dlqUrl: 'OrdersDlqUrl' },
  aggregate: { source: 'AggregateQueueArn', dlq: 'AggregateDlqArn', dlqUrl: 'AggregateDlqUrl' },
};

/** Moves a DLQ's messages back to its queue with a message move task and waits for the end. */
export const replayDlq = async (
  target: Target,
  queue: QueueName,
  onProgress?: (moved: number, total: number) => void,
  timeoutMs = 600_000,
) => {
  const names = QUEUE_OUTPUTS[queue];
  const dlqArn = target.output(names.dlq);
  const depth = await queueDepth(target.clients.sqs, target.output(names.dlqUrl));
  if (depth.visible + depth.inFlight === 0) return { moved: 0, status: 'EMPTY' };
  await target.clients.sqs.send(
    new StartMessageMoveTaskCommand({
      SourceArn: dlqArn,
      DestinationArn: target.output(names.source),
    }),
  );
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [task] =
      (
        await target.clients.sqs.send(
          new ListMessageMoveTasksCommand({ SourceArn: dlqArn, MaxResults: 1 }),
        )
      ).Results ?? [];
    const moved = Number(task?.ApproximateNumberOfMessagesMoved ?? 0);
    onProgress?.(moved, Number(task?.ApproximateNumberOfMessagesToMove ?? moved));
    if (task?.Status === 'COMPLETED') return { moved, status: task.Status };
    if (task?.Status === 'FAILED' || task?.Status === 'CANCELLED') {
      throw new CliError(
        `the move task ended ${task.Status}${task.FailureReason ? `: ${task.FailureReason}` : ''} after moving ${moved}`,
      );
    }
    if (Date.now() > deadline)
      throw new CliError(
        `the move task is still running after ${timeoutMs / 1000} s (moved ${moved})`,
      );
    await delay(250);
  }
};

/** The archived raw batches whose earliest event falls in the interval. */
export const archivedKeys = async (target: Target, interval: Interval): Promise<string[]> => {
  const store = new S3Store(target.clients.s3, target.output('BucketName'));
  const keys: string[] = [];
  for (const hour of hoursBetween(interval.fromMs, interval.toMs)) {
    keys.push(
      ...(await store.listKeys(
        `${RAW_PREFIX}date=${hour.slice(0, 10)}/hour=${hour.slice(11, 13)}/`,
      )),
    );
  }
  return keys;
};

/** Re-sends archived batches. Safe: the ledger recognises every batch already applied. */
export const replayArchive = async (
  target: Target,
  interval: Interval,
  onProgress?: (sent: number, total: number) => void,
) => {
  const bucket = target.output('BucketName');
  const keys = await archivedKeys(target, interval);
  const bodies: string[] = [];
  for (const key of keys) {
    const out = await target.clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    bodies.push((await out.Body?.transformToString()) ?? '');
  }
  const { sent, refused } = await sendLines(target, bodies, onProgress ? { onProgress } : {});
  return {
    batches: sent,
    refused: refused.map((r) => ({ key: keys[r.line - 1] ?? '', reason: r.reason })),
  };
};

export const register = (program: Command): void => {
  const replay = program
    .command('replay')
    .description('send messages again: a DLQ back to its queue, or archived batches');
  replay
    .command('dlq')
    .description('move the DLQ messages back to their queue (a message move task) and wait for it')
    .addOption(
      new Option('--queue <queue>', 'which DLQ').choices(['orders', 'aggregate']).default('orders'),
    )
    .addHelpText(
      'after',
      '\nExample:\n  npx onceflow replay dlq --queue orders && npx onceflow drain',
    )
    .action(
      run(async (o: { queue: QueueName }) => {
        const t = await target();
        const bar = progress(`moving ${o.queue} DLQ`);
        const result = await replayDlq(t, o.queue, bar.update);
        bar.stop();
        console.log(
          result.status === 'EMPTY'
            ? `the ${o.queue} DLQ is empty`
            : `moved ${result.moved} messages back to the ${o.queue} queue`,
        );
        return 0;
      }),
    );
  replay
    .command('archive')
    .description(
      're-send the archived raw batches of an interval (already applied ones are skipped by the ledger)',
    )
    .requiredOption('--from <time>', 'first hour of the batches’ earliest events (inclusive)')
    .requiredOption('--to <time>', 'end hour (exclusive)')
    .addHelpText(
      'after',
      '\nExample:\n  npx onceflow replay archive --from 2026-10-01 --to 2026-10-02',
    )
    .action(
      run(async (o: { from: string; to: string }) => {
        const interval = parseInterval(o.from, o.to, true);
        if (!interval) return 1;
        const bar = progress('replaying');
        const { batches, refused } = await replayArchive(await target(), interval, bar.update);
        bar.stop();
        console.log(`re-sent ${batches} archived batches`);
        for (const r of refused) console.error(`${r.key} was not sent: ${r.reason}`);
        return refused.length > 0 ? 1 : 0;
      }),
    );
};
