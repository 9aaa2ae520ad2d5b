/** Waiting for queues to settle, by their depth alone (works against any endpoint). */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { queueDepth } from '../adapters/sqs.ts';
import { waitFor } from './net.ts';

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
