/**
 * Draining queues: waiting for them to settle, by their depth alone (works against any
 * endpoint), or feeding one to a handler in the foreground until it is empty.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { queueDepth } from '../adapters/sqs.ts';
import { waitFor } from './net.ts';
import {
  type DrainOptions as PollerDrainOptions,
  type PollerOptions,
  SqsPoller,
} from './sqs-poller.ts';

export interface DrainOptions {
  readonly timeoutMs: number;
  /** Consecutive empty readings required: SQS depths are approximate. Default 3. */
  readonly settledReadings?: number;
  readonly onProgress?: (pending: number) => void;
}

/** Resolves once every queue reads empty with nothing in flight, several times in a row. */
export const drainQueues = async (
  sqs: SQSClient,
  queueUrls: readonly string[],
  options: DrainOptions,
): Promise<void> => {
  let streak = 0;
  await waitFor(
    async () => {
      const depths = await Promise.all(queueUrls.map((url) => queueDepth(sqs, url)));
      const pending = depths.reduce((sum, d) => sum + d.visible + d.inFlight + d.delayed, 0);
      options.onProgress?.(pending);
      streak = pending === 0 ? streak + 1 : 0;
      return streak >= (options.settledReadings ?? 3);
    },
    { timeoutMs: options.timeoutMs, what: 'the queues to drain', intervalMs: 200 },
  );
};

export interface DrainQueueOptions extends PollerDrainOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly region: string;
  /** One invocation in a concurrency slot; its result is read as a partial batch response. */
  readonly invoke: PollerOptions['invoke'];
  /** Default 10. */
  readonly batchSize?: number;
  /** Concurrent invocations (slots). Default 1. */
  readonly maxConcurrency?: number;
  /** Seconds before a failed message is visible again. Default 0: at once. */
  readonly retryDelaySeconds?: number;
  readonly receiveSize?: () => number;
  readonly onBatch?: PollerOptions['onBatch'];
}

/** Feeds a queue to a handler in the foreground, as the event source mapping would, until empty. */
export const drainQueue = (o: DrainQueueOptions): Promise<{ invocations: number }> =>
  new SqsPoller({
    sqs: o.sqs,
    queueUrl: o.queueUrl,
    queueArn: o.queueArn,
    region: o.region,
    batchSize: o.batchSize ?? 10,
    batchingWindowSeconds: 0,
    maxConcurrency: o.maxConcurrency ?? 1,
    reportBatchItemFailures: true,
    retryDelaySeconds: o.retryDelaySeconds ?? 0,
    invoke: o.invoke,
    ...(o.receiveSize ? { receiveSize: o.receiveSize } : {}),
    ...(o.onBatch ? { onBatch: o.onBatch } : {}),
  }).drain(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs });
