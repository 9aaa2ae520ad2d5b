import { createHash } from 'node:crypto';
import type { Message } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { INVOKE_PAYLOAD_BYTES } from './lambda-quotas.ts';

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

const EMPTY_EVENT_BYTES = Buffer.byteLength(JSON.stringify(toSqsEvent([])));

/**
 * The records, in order, in consecutive events of at most `limit` bytes as JSON (a record alone
 * over the limit, which SQS's message size rules out, is an event of its own).
 */
export const eventsWithinPayload = (
  records: readonly SQSRecord[],
  limit = INVOKE_PAYLOAD_BYTES,
): SQSEvent[] => {
  const events: SQSRecord[][] = [];
  let current: SQSRecord[] = [];
  let bytes = EMPTY_EVENT_BYTES;
  for (const record of records) {
    const size = Buffer.byteLength(JSON.stringify(record));
    // One comma between records.
    if (current.length > 0 && bytes + 1 + size > limit) {
      events.push(current);
      current = [];
      bytes = EMPTY_EVENT_BYTES;
    }
    bytes += (current.length > 0 ? 1 : 0) + size;
    current.push(record);
  }
  if (current.length > 0) events.push(current);
  return events.map(toSqsEvent);
};

/**
 * The message ids to retry, given what the function returned. Lambda treats as full success an
 * empty or null `batchItemFailures` and an empty or null response; as full failure an invalid
 * response, an empty or null `itemIdentifier`, a wrong key, or an id not in the batch.
 */
export const failedIdsOf = (
  response: unknown,
  batchIds: readonly string[],
): { ids: string[]; invalid?: string } => {
  if (response === null || response === undefined) return { ids: [] };
  if (typeof response !== 'object' || Array.isArray(response)) {
    return { ids: [...batchIds], invalid: 'the response is not a JSON object' };
  }
  const failures = (response as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === null || failures === undefined) return { ids: [] };
  if (!Array.isArray(failures))
    return { ids: [...batchIds], invalid: 'batchItemFailures is not a list' };
  const ids: string[] = [];
  for (const failure of failures) {
    const id =
      typeof failure === 'object' && failure !== null
        ? (failure as { itemIdentifier?: unknown }).itemIdentifier
        : undefined;
    if (typeof id !== 'string' || id === '' || !batchIds.includes(id)) {
      return {
        ids: [...batchIds],
        invalid: `invalid itemIdentifier ${JSON.stringify(id ?? failure)}`,
      };
    }
    ids.push(id);
  }
  return { ids };
};
