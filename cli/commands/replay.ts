/** `onceflow replay dlq` and `replay archive`. */

import { GetObjectCommand } from '@aws-sdk/client-s3';
import { ListMessageMoveTasksCommand, StartMessageMoveTaskCommand } from '@aws-sdk/client-sqs';
import { S3Store } from '../../adapters/s3.ts';
import { queueDepth } from '../../adapters/sqs.ts';
import { RAW_PREFIX } from '../../shared/keys.ts';
import { hoursBetween } from '../../shared/time.ts';
import { CliError, type Target } from '../target.ts';
import type { Interval } from './interval.ts';
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
