/**
 * Feeding a queue to a handler in the foreground until the queue is empty (tests, benchmarks):
 * what the event source mapping does, without the background polling, so every invocation is
 * accounted for before this returns. Failed messages come back at once.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { queueDepth } from '../cli/drain.ts';
import { lambdaContext } from './lambda-context.ts';
import { waitFor } from './net.ts';
import { toSqsEvent, toSqsRecord } from './sqs-event.ts';
import { failedIdsOf } from './sqs-poller.ts';

export interface DriveOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly region: string;
  readonly handler: (
    event: SQSEvent,
    context: ReturnType<typeof lambdaContext>,
  ) => Promise<SQSBatchResponse | undefined>;
  readonly functionName?: string;
  readonly batchSize?: number;
  readonly timeoutMs?: number;
}

export const driveQueue = async (o: DriveOptions): Promise<{ invocations: number }> => {
  let invocations = 0;
  await waitFor(
    async () => {
      const received = await o.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: o.queueUrl,
          MaxNumberOfMessages: Math.min(10, o.batchSize ?? 10),
          MessageSystemAttributeNames: ['All'],
          WaitTimeSeconds: 0,
        }),
      );
      const messages = received.Messages ?? [];
      if (messages.length === 0) {
        const depth = await queueDepth(o.sqs, o.queueUrl);
        return depth.visible + depth.inFlight + depth.delayed === 0;
      }
      invocations++;
      const ids = messages.map((m) => m.MessageId ?? '');
      let failed: string[];
      try {
        const response = await o.handler(
          toSqsEvent(messages.map((m) => toSqsRecord(m, o.queueArn, o.region))),
          lambdaContext(o.functionName ?? 'driven', 30_000),
        );
        failed = failedIdsOf(response, ids).ids;
      } catch {
        failed = ids;
      }
      const done = messages.filter((m) => !failed.includes(m.MessageId ?? ''));
      const retry = messages.filter((m) => failed.includes(m.MessageId ?? ''));
      if (done.length) {
        await o.sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: o.queueUrl,
            Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
          }),
        );
      }
      if (retry.length) {
        await o.sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: o.queueUrl,
            Entries: retry.map((m, i) => ({
              Id: String(i),
              ReceiptHandle: m.ReceiptHandle ?? '',
              VisibilityTimeout: 0,
            })),
          }),
        );
      }
      return false;
    },
    { timeoutMs: o.timeoutMs ?? 60_000, what: `the queue ${o.queueUrl} to drain`, intervalMs: 1 },
  );
  return { invocations };
};
