/** Waiting for queues to settle, by their depth alone (works against any endpoint). */
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { waitFor } from '../local/net.ts';

export interface QueueDepth {
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
}

export const queueDepth = async (sqs: SQSClient, queueUrl: string): Promise<QueueDepth> => {
  const a =
    (
      await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: [
            'ApproximateNumberOfMessages',
            'ApproximateNumberOfMessagesNotVisible',
            'ApproximateNumberOfMessagesDelayed',
          ],
        }),
      )
    ).Attributes ?? {};
  return {
    visible: Number(a.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
  };
};

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
