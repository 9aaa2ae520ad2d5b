import { createHash } from 'node:crypto';
import type { Message } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';

/** The SQS record Lambda's event source mapping builds from a received message. */
export const toSqsRecord = (message: Message, queueArn: string, region: string): SQSRecord => {
  const body = message.Body ?? '';
  const attrs = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body,
    attributes: {
      ApproximateReceiveCount: attrs.ApproximateReceiveCount ?? '1',
      SentTimestamp: attrs.SentTimestamp ?? String(Date.now()),
      SenderId: attrs.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp:
        attrs.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      // From a FIFO queue, as Lambda passes them.
      ...(attrs.MessageGroupId === undefined
        ? {}
        : {
            MessageGroupId: attrs.MessageGroupId,
            MessageDeduplicationId: attrs.MessageDeduplicationId ?? '',
            SequenceNumber: attrs.SequenceNumber ?? '',
          }),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? createHash('md5').update(body).digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
};

export const toSqsEvent = (records: SQSRecord[]): SQSEvent => ({ Records: records });
