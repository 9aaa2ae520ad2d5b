/**
 * Where Lambda sends what becomes of an asynchronous invocation, for a stack on the local
 * runtime: an invocation record (or, for a dead-letter queue, the event itself, with Lambda's
 * `RequestID`, `ErrorCode` and `ErrorMessage` attributes) to one of the stack's queues, or to one
 * of its functions as an asynchronous invocation. Other destinations (topics, event buses) are
 * not emulated: a delivery to one fails with a reason, which the runtime reports.
 */
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { LAMBDA_ASYNC_DEFAULTS } from './async-config.ts';
import type { AsyncFunctions, Delivery } from './async-invocations.ts';
import type { LocalFunction, LocalQueue } from './provision.ts';

/** Lambda cuts a dead-letter message's `ErrorMessage` attribute to 1 KB. */
const ERROR_MESSAGE_BYTES = 1024;

export const stackAsyncFunctions = (o: {
  /** Read at each use: a swap replaces them. */
  readonly functions: () => readonly LocalFunction[];
  readonly queues: readonly LocalQueue[];
  readonly sqs: SQSClient;
  readonly invoke: AsyncFunctions['invoke'];
  /** Queues an asynchronous invocation of one of the stack's functions. */
  readonly enqueue: (functionLogicalId: string, event: unknown) => void;
}): AsyncFunctions => {
  const byId = (id: string) => o.functions().find((f) => f.logicalId === id);
  return {
    invoke: o.invoke,
    configOf: (id) => byId(id)?.asyncInvoke ?? LAMBDA_ASYNC_DEFAULTS,
    describe: (id) => {
      const fn = byId(id);
      return {
        arn: fn?.arn ?? id,
        ...(fn?.deadLetterArn === undefined ? {} : { deadLetterArn: fn.deadLetterArn }),
      };
    },
    deliver: async (arn: string, delivery: Delivery) => {
      const payload = delivery.kind === 'record' ? delivery.record : delivery.event;
      const queue = o.queues.find((q) => q.arn === arn);
      if (queue) {
        await o.sqs.send(
          new SendMessageCommand({
            QueueUrl: queue.url,
            MessageBody: JSON.stringify(payload),
            ...(delivery.kind === 'dead-letter'
              ? {
                  MessageAttributes: {
                    RequestID: { DataType: 'String', StringValue: delivery.requestId },
                    ErrorCode: { DataType: 'Number', StringValue: '200' },
                    ErrorMessage: {
                      DataType: 'String',
                      StringValue: Buffer.from(delivery.errorMessage)
                        .subarray(0, ERROR_MESSAGE_BYTES)
                        .toString(),
                    },
                  },
                }
              : {}),
          }),
        );
        return;
      }
      const fn = o.functions().find((f) => arn === f.arn || arn === `${f.arn}:$LATEST`);
      if (fn) return o.enqueue(fn.logicalId, payload);
      throw new Error(
        `${arn} is not emulated locally (destinations may be the stack's queues and functions)`,
      );
    },
  };
};
