import { queueMessageLimit, sendBodies } from '../../adapters/sqs.ts';
import type { Target } from '../target.ts';

export interface SendOptions {
  /** Messages per second at most; undefined: as fast as possible. */
  readonly rate?: number;
  readonly onProgress?: (sent: number, total: number) => void;
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
