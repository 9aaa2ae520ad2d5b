/**
 * Sending to SQS within its limits: at most 10 entries and 1 MiB of message bodies per
 * SendMessageBatch request, and each message within the queue's MaximumMessageSize. Every
 * sender (the notifier, `send`, `replay archive`, the demo, chaos and bench drivers) goes
 * through `sendBodies`, so a valid body is never refused for sharing a request with others.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { hourNotificationFields } from '../shared/coalesce.ts';
import { mapLimit } from '../shared/concurrency.ts';
import type { HourNotifier } from '../shared/ingest.ts';
import { sleep } from './backoff.ts';

/** SendMessageBatch: entries per request. */
export const SQS_MAX_BATCH_ENTRIES = 10;
/** SendMessageBatch: the sum of the message sizes in one request (1 MiB). */
export const SQS_MAX_REQUEST_BYTES = 1_048_576;
/** The largest MaximumMessageSize a queue can have, and the default of queues created since 2025. */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;

/**
 * Groups bodies (by index, in order) into requests that respect the entry and byte limits.
 * A body larger than `maxMessageBytes` is set aside in `oversize`, never sent.
 */
export const packBodies = (
  bodies: readonly string[],
  maxMessageBytes: number,
): { readonly requests: number[][]; readonly oversize: number[] } => {
  const requests: number[][] = [];
  const oversize: number[] = [];
  let current: number[] = [];
  let currentBytes = 0;
  for (const [index, body] of bodies.entries()) {
    const bytes = Buffer.byteLength(body, 'utf8');
    if (bytes > maxMessageBytes || bytes > SQS_MAX_REQUEST_BYTES) {
      oversize.push(index);
      continue;
    }
    if (
      current.length === SQS_MAX_BATCH_ENTRIES ||
      (current.length > 0 && currentBytes + bytes > SQS_MAX_REQUEST_BYTES)
    ) {
      requests.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(index);
    currentBytes += bytes;
  }
  if (current.length > 0) requests.push(current);
  return { requests, oversize };
};

/** The queue's MaximumMessageSize in bytes. */
export const queueMessageLimit = async (sqs: SQSClient, queueUrl: string): Promise<number> => {
  const out = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['MaximumMessageSize'] }),
  );
  const limit = Number(out.Attributes?.MaximumMessageSize);
  return Number.isInteger(limit) && limit > 0 ? limit : SQS_MAX_MESSAGE_BYTES;
};

/** What a queue holds, by SQS's approximate counts. */
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

/** A message read without taking it. */
export interface PeekedMessage {
  readonly messageId: string;
  readonly body: string;
  readonly sentAtMs: number | undefined;
  /** Receives before this read: SQS's `ApproximateReceiveCount`, less this read's own. */
  readonly receives: number | undefined;
}

export interface PeekOptions {
  /** At most this many messages. */
  readonly limit: number;
  /**
   * How long the messages read stay hidden while the rest are read, in seconds: long enough that
   * later receives return other messages (a receive with a visibility of 0 may return the same
   * ten again and again). They are made visible again as soon as the read ends; if the reader
   * dies first, they come back once this has passed. Default 60.
   */
  readonly holdSeconds?: number;
}

/**
 * Up to `limit` of a queue's visible messages, leaving them in the queue: each is received
 * once, hidden until the read is done, then made visible again. Each read adds one to a
 * message's receive count (nothing acts on it in a DLQ, which has no redrive policy). Of a FIFO
 * queue, only each message group's first messages can be read this way: as many as the receive
 * that reached the group held, since SQS gives no more of a group while any of it is in flight.
 */
export const peekMessages = async (
  sqs: SQSClient,
  queueUrl: string,
  options: PeekOptions,
): Promise<PeekedMessage[]> => {
  const wanted = Math.min(options.limit, (await queueDepth(sqs, queueUrl)).visible);
  const seen = new Map<string, PeekedMessage>();
  const handles: string[] = [];
  try {
    // A receive samples SQS's servers, so one may come back short while others remain: read
    // until the visible count is reached, or twice in a row nothing new came back.
    for (let idle = 0; seen.size < wanted && idle < 2; ) {
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: Math.min(SQS_MAX_BATCH_ENTRIES, wanted - seen.size),
          VisibilityTimeout: options.holdSeconds ?? 60,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['SentTimestamp', 'ApproximateReceiveCount'],
        }),
      );
      const before = seen.size;
      for (const m of out.Messages ?? []) {
        if (m.ReceiptHandle) handles.push(m.ReceiptHandle);
        if (!m.MessageId || seen.has(m.MessageId)) continue;
        const sent = Number(m.Attributes?.SentTimestamp);
        const count = Number(m.Attributes?.ApproximateReceiveCount);
        seen.set(m.MessageId, {
          messageId: m.MessageId,
          body: m.Body ?? '',
          sentAtMs: Number.isFinite(sent) ? sent : undefined,
          receives: Number.isInteger(count) && count > 0 ? count - 1 : undefined,
        });
      }
      idle = seen.size > before ? 0 : idle + 1;
    }
  } finally {
    // An entry this fails for (a handle gone stale) is harmless: it is visible after the hold.
    await setVisibility(sqs, queueUrl, handles, 0);
  }
  return [...seen.values()];
};

/** Sets received messages' visibility timeout, by receipt handle, ten to a request. */
export const setVisibility = async (
  sqs: SQSClient,
  queueUrl: string,
  handles: readonly string[],
  seconds: number,
): Promise<void> => {
  for (let i = 0; i < handles.length; i += SQS_MAX_BATCH_ENTRIES) {
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: handles.slice(i, i + SQS_MAX_BATCH_ENTRIES).map((ReceiptHandle, j) => ({
          Id: String(j),
          ReceiptHandle,
          VisibilityTimeout: seconds,
        })),
      }),
    );
  }
};

/** Deletes received messages, by receipt handle, ten to a request. */
export const deleteReceived = async (
  sqs: SQSClient,
  queueUrl: string,
  handles: readonly string[],
): Promise<void> => {
  for (let i = 0; i < handles.length; i += SQS_MAX_BATCH_ENTRIES) {
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: handles
          .slice(i, i + SQS_MAX_BATCH_ENTRIES)
          .map((ReceiptHandle, j) => ({ Id: String(j), ReceiptHandle })),
      }),
    );
  }
};

/** A body SQS will never take: too large, or refused as the sender's fault. */
export interface RefusedBody {
  readonly index: number;
  readonly reason: string;
}

export interface SendBodiesOptions {
  /** The queue's MaximumMessageSize. Default SQS_MAX_MESSAGE_BYTES. */
  readonly maxMessageBytes?: number;
  /** Messages per second at most; default as fast as possible. */
  readonly rate?: number;
  /** Attempts for entries that fail through no fault of their own. Default 8. */
  readonly attempts?: number;
  readonly onProgress?: (sent: number, total: number) => void;
  /** For a FIFO queue: each body's message group and deduplication id. */
  readonly fifo?: (index: number) => { readonly groupId: string; readonly deduplicationId: string };
  /**
   * Requests in flight at once. Default 1: the bodies arrive in the order given. More sends
   * faster, in no particular order (a standard queue promises none anyway; every onceflow body
   * is applied the same in any order); refused with `fifo`, whose groups need their order.
   */
  readonly inFlight?: number;
}

/**
 * Sends every body as one message, packed by size, in order (unless `inFlight` trades the order
 * for speed). Entries failing through no fault of their own are retried with backoff; bodies SQS
 * refuses for good are returned, and the rest still go.
 */
export const sendBodies = async (
  sqs: SQSClient,
  queueUrl: string,
  bodies: readonly string[],
  options: SendBodiesOptions = {},
): Promise<{ readonly sent: number; readonly refused: readonly RefusedBody[] }> => {
  const maxMessageBytes = options.maxMessageBytes ?? SQS_MAX_MESSAGE_BYTES;
  const { requests, oversize } = packBodies(bodies, maxMessageBytes);
  const refused: RefusedBody[] = oversize.map((index) => ({
    index,
    reason: `the body is ${Buffer.byteLength(bodies[index] ?? '', 'utf8')} bytes; the queue takes at most ${maxMessageBytes}`,
  }));
  const attempts = options.attempts ?? 8;
  const inFlight = options.inFlight ?? 1;
  if (options.fifo && inFlight > 1)
    throw new Error('a FIFO queue takes its messages one request at a time, in order');
  // The monotonic clock: the wall clock may be adjusted while a paced send runs.
  const started = performance.now();
  let sent = 0;
  // Entries handed to SQS so far, retries included: what the rate is kept to.
  let attempted = 0;
  const sendRequest = async (request: readonly number[]) => {
    let pending = request;
    for (let attempt = 1; pending.length > 0; attempt++) {
      attempted += pending.length;
      if (options.rate) {
        // A timer may fire a little early: wait until the request's share of the time is past.
        const due = started + (attempted / options.rate) * 1000;
        for (let ahead = due - performance.now(); ahead > 0; ahead = due - performance.now())
          await sleep(ahead);
      }
      const out = await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: pending.map((index) => {
            const fifo = options.fifo?.(index);
            return {
              Id: String(index),
              MessageBody: bodies[index],
              ...(fifo
                ? { MessageGroupId: fifo.groupId, MessageDeduplicationId: fifo.deduplicationId }
                : {}),
            };
          }),
        }),
      );
      sent += out.Successful?.length ?? 0;
      const retry: number[] = [];
      for (const failure of out.Failed ?? []) {
        const index = Number(failure.Id);
        if (failure.SenderFault) {
          refused.push({ index, reason: `${failure.Code} ${failure.Message ?? ''}`.trim() });
        } else retry.push(index);
      }
      pending = retry;
      if (pending.length > 0 && attempt >= attempts) {
        throw new Error(
          `${pending.length} messages still failing after ${attempt} attempts: ${(out.Failed ?? []).map((f) => f.Code).join(', ')}`,
        );
      }
      if (pending.length > 0) await sleep(50 * 2 ** attempt);
    }
    options.onProgress?.(sent, bodies.length);
  };
  await mapLimit(requests, inFlight, sendRequest);
  return { sent, refused: refused.sort((a, b) => a.index - b.index) };
};

export interface SqsHourNotifierOptions {
  /**
   * The coalescing window in seconds: with one, the queue is FIFO and each notification is
   * grouped by hour and deduplicated per window (see `shared/coalesce.ts`). Default 0: none.
   */
  readonly coalesceSeconds?: number;
  /** The clock that picks the window. Default Date.now. */
  readonly now?: () => number;
}

/** Asks the aggregator to recompute hours: one message per hour, duplicates are harmless. */
export class SqsHourNotifier implements HourNotifier {
  readonly #client: SQSClient;
  readonly #queueUrl: string;
  readonly #coalesceSeconds: number;
  readonly #now: () => number;

  constructor(client: SQSClient, queueUrl: string, options: SqsHourNotifierOptions = {}) {
    this.#client = client;
    this.#queueUrl = queueUrl;
    this.#coalesceSeconds = options.coalesceSeconds ?? 0;
    this.#now = options.now ?? Date.now;
  }

  async notifyHours(hours: readonly string[]): Promise<void> {
    const window = this.#coalesceSeconds;
    // Read once: the whole request belongs to one window.
    const now = this.#now();
    const { refused } = await sendBodies(
      this.#client,
      this.#queueUrl,
      hours.map((hour) => JSON.stringify({ hour })),
      {
        // The batch is already committed: if a send keeps failing, the message fails, and its
        // redelivery (a duplicate for the ledger) notifies again.
        attempts: 3,
        ...(window > 0
          ? { fifo: (i: number) => hourNotificationFields(hours[i] ?? '', now, window) }
          : {}),
      },
    );
    if (refused.length > 0) {
      throw new Error(
        `could not notify hours: ${refused.map((r) => `${hours[r.index]}: ${r.reason}`).join('; ')}`,
      );
    }
  }
}
