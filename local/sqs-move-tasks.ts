/**
 * SQS message move tasks (DLQ redrive) for an emulator without them, as AWS documents them:
 * StartMessageMoveTask moves the messages a dead-letter queue holds when the task starts, to
 * `DestinationArn` or back to the queue whose redrive policy targets it, as new messages (new
 * ids, same body and attributes), at most `MaxNumberOfMessagesPerSecond` (≤ 500) a second; one
 * running task per source queue; ListMessageMoveTasks and CancelMessageMoveTask report and stop.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import { deleteReceived, packBodies, SQS_MAX_MESSAGE_BYTES } from '../adapters/sqs.ts';
import { readBody } from './http.ts';

export const MOVE_TASK_ACTIONS = [
  'StartMessageMoveTask',
  'ListMessageMoveTasks',
  'CancelMessageMoveTask',
] as const;
type Action = (typeof MOVE_TASK_ACTIONS)[number];

type Status = 'RUNNING' | 'COMPLETED' | 'CANCELLING' | 'CANCELLED' | 'FAILED';

interface Task {
  readonly handle: string;
  readonly sourceArn: string;
  readonly destinationArn: string | undefined;
  readonly rate: number | undefined;
  readonly startedAt: number;
  status: Status;
  moved: number;
  toMove: number;
  failureReason?: string;
}

class SqsApiError extends Error {
  readonly code: string;
  readonly status: number;
  constructor(code: string, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    const status = options.status ?? 400;
    this.code = code;
    this.status = status;
  }
}

const StartSchema = v.object({
  SourceArn: v.string(),
  DestinationArn: v.optional(v.string()),
  MaxNumberOfMessagesPerSecond: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(500)),
  ),
});
const ListSchema = v.object({
  SourceArn: v.string(),
  MaxResults: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10))),
});
const CancelSchema = v.object({ TaskHandle: v.string() });

const queueNameOf = (arn: string) => {
  const name = arn.split(':')[5];
  if (!name)
    throw new SqsApiError(
      'InvalidParameterValue',
      `Value ${arn} for parameter QueueArn is invalid.`,
    );
  return name;
};

export class SqsMoveTasks {
  readonly #sqs: SQSClient;
  readonly #tasks: Task[] = [];

  constructor(sqs: SQSClient) {
    this.#sqs = sqs;
  }

  async handle(req: IncomingMessage, res: ServerResponse, action: Action): Promise<void> {
    try {
      const input: unknown = JSON.parse((await readBody(req)) || '{}');
      const output =
        action === 'StartMessageMoveTask'
          ? await this.#start(input)
          : action === 'ListMessageMoveTasks'
            ? this.#list(input)
            : this.#cancel(input);
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify(output));
    } catch (error) {
      const e =
        error instanceof SqsApiError
          ? error
          : error instanceof v.ValiError || error instanceof SyntaxError
            ? new SqsApiError('InvalidParameterValue', (error as Error).message, { cause: error })
            : new SqsApiError('InternalError', (error as Error).message, {
                status: 500,
                cause: error,
              });
      res.writeHead(e.status, {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-query-error': `AWS.SimpleQueueService.${e.code};Sender`,
      });
      res.end(JSON.stringify({ __type: `com.amazonaws.sqs#${e.code}`, message: e.message }));
    }
  }

  async #urlOf(arn: string): Promise<string> {
    let cause: unknown;
    try {
      const out = await this.#sqs.send(new GetQueueUrlCommand({ QueueName: queueNameOf(arn) }));
      if (out.QueueUrl) return out.QueueUrl;
    } catch (error) {
      cause = error; // answered below as AWS answers it
    }
    throw new SqsApiError(
      'ResourceNotFoundException',
      `The resource that you specified for the SourceArn parameter doesn't exist: ${arn}`,
      { cause },
    );
  }

  /** Queues whose redrive policy names `dlqArn` as their dead-letter queue. */
  async #sourcesOf(dlqArn: string): Promise<string[]> {
    const urls = (await this.#sqs.send(new ListQueuesCommand({}))).QueueUrls ?? [];
    const sources: string[] = [];
    for (const url of urls) {
      const attrs =
        (
          await this.#sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }),
          )
        ).Attributes ?? {};
      if (!attrs.RedrivePolicy || !attrs.QueueArn) continue;
      const policy: unknown = JSON.parse(attrs.RedrivePolicy);
      if (
        typeof policy === 'object' &&
        policy &&
        'deadLetterTargetArn' in policy &&
        policy.deadLetterTargetArn === dlqArn
      ) {
        sources.push(attrs.QueueArn);
      }
    }
    return sources;
  }

  async #start(input: unknown) {
    const { SourceArn, DestinationArn, MaxNumberOfMessagesPerSecond } = v.parse(StartSchema, input);
    const sourceUrl = await this.#urlOf(SourceArn);
    if (
      this.#tasks.some(
        (t) => t.sourceArn === SourceArn && (t.status === 'RUNNING' || t.status === 'CANCELLING'),
      )
    ) {
      throw new SqsApiError(
        'UnsupportedOperation',
        'There is already a task running. Only one active task is allowed for each source queue arn at a given time.',
      );
    }
    const sources = await this.#sourcesOf(SourceArn);
    if (sources.length === 0) {
      throw new SqsApiError(
        'InvalidParameterValue',
        'Source queue must be configured as a Dead Letter Queue.',
      );
    }
    const destinationArn = DestinationArn ?? (sources.length === 1 ? sources[0] : undefined);
    if (!destinationArn) {
      // AWS remembers each message's original source; this emulator cannot, so it asks.
      throw new SqsApiError(
        'InvalidParameterValue',
        `Several queues use ${SourceArn} as their dead-letter queue: give DestinationArn.`,
      );
    }
    const destinationUrl = await this.#urlOf(destinationArn);
    const attrs = await this.#sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: sourceUrl,
        AttributeNames: ['ApproximateNumberOfMessages'],
      }),
    );
    const task: Task = {
      handle: Buffer.from(JSON.stringify({ taskId: randomUUID(), sourceArn: SourceArn })).toString(
        'base64',
      ),
      sourceArn: SourceArn,
      destinationArn: DestinationArn,
      rate: MaxNumberOfMessagesPerSecond,
      startedAt: Date.now(),
      status: 'RUNNING',
      moved: 0,
      toMove: Number(attrs.Attributes?.ApproximateNumberOfMessages ?? 0),
    };
    this.#tasks.push(task);
    void this.#run(task, sourceUrl, destinationUrl).catch((error: Error) => {
      task.status = 'FAILED';
      task.failureReason = error.message;
    });
    return { TaskHandle: task.handle };
  }

  async #run(task: Task, sourceUrl: string, destinationUrl: string): Promise<void> {
    const rate = task.rate ?? 500;
    while (task.moved < task.toMove && task.status === 'RUNNING') {
      // Pace to the rate: never ahead of moved/rate seconds since the start.
      const ahead = task.startedAt + (task.moved / rate) * 1000 - Date.now();
      if (ahead > 0) await new Promise((r) => setTimeout(r, ahead));
      const received = await this.#sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: sourceUrl,
          MaxNumberOfMessages: Math.min(10, task.toMove - task.moved, rate),
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['MessageGroupId'],
          VisibilityTimeout: 30,
          WaitTimeSeconds: 0,
        }),
      );
      const messages = received.Messages ?? [];
      if (messages.length === 0) break;
      // Received messages can each be up to 1 MiB: re-pack them so a request stays within
      // SQS's 1 MiB per SendMessageBatch (attributes are small; bodies dominate).
      const done: Message[] = [];
      for (const pack of packBodies(
        messages.map((m) => m.Body ?? ''),
        SQS_MAX_MESSAGE_BYTES,
      ).requests) {
        const sent = await this.#sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: destinationUrl,
            Entries: pack.map((i) => {
              const m = messages[i];
              const groupId = m?.Attributes?.MessageGroupId;
              return {
                Id: String(i),
                MessageBody: m?.Body ?? '',
                // Into a FIFO queue: the group kept, and (as SQS does moving a FIFO message to
                // its DLQ) the message id as deduplication id, so no moved message is dropped.
                ...(destinationUrl.endsWith('.fifo')
                  ? {
                      MessageGroupId: groupId ?? 'redrive',
                      MessageDeduplicationId: m?.MessageId ?? String(i),
                    }
                  : {}),
                ...(m?.MessageAttributes && Object.keys(m.MessageAttributes).length
                  ? { MessageAttributes: m.MessageAttributes }
                  : {}),
              };
            }),
          }),
        );
        for (const s of sent.Successful ?? []) {
          const m = messages[Number(s.Id)];
          if (m) done.push(m);
        }
      }
      await deleteReceived(
        this.#sqs,
        sourceUrl,
        done.map((m) => m.ReceiptHandle ?? ''),
      );
      task.moved += done.length;
      if (done.length < messages.length)
        throw new Error(
          `could not send ${messages.length - done.length} messages to the destination`,
        );
    }
    task.status = task.status === 'CANCELLING' ? 'CANCELLED' : 'COMPLETED';
  }

  #list(input: unknown) {
    const { SourceArn, MaxResults = 1 } = v.parse(ListSchema, input);
    const results = this.#tasks
      .filter((t) => t.sourceArn === SourceArn)
      .reverse()
      .slice(0, MaxResults)
      .map((t) => ({
        ...(t.status === 'RUNNING' ? { TaskHandle: t.handle } : {}),
        Status: t.status,
        SourceArn: t.sourceArn,
        ...(t.destinationArn ? { DestinationArn: t.destinationArn } : {}),
        ...(t.rate ? { MaxNumberOfMessagesPerSecond: t.rate } : {}),
        ApproximateNumberOfMessagesMoved: t.moved,
        ApproximateNumberOfMessagesToMove: t.toMove,
        ...(t.failureReason ? { FailureReason: t.failureReason } : {}),
        StartedTimestamp: t.startedAt,
      }));
    return { Results: results };
  }

  #cancel(input: unknown) {
    const { TaskHandle } = v.parse(CancelSchema, input);
    const task = this.#tasks.find((t) => t.handle === TaskHandle);
    if (!task)
      throw new SqsApiError(
        'ResourceNotFoundException',
        'The specified task handle does not exist.',
      );
    if (task.status !== 'RUNNING')
      throw new SqsApiError(
        'UnsupportedOperation',
        `Only a running task can be cancelled; this one is ${task.status}.`,
      );
    task.status = 'CANCELLING';
    return { ApproximateNumberOfMessagesMoved: task.moved };
  }
}
