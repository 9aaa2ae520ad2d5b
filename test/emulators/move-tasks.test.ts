import {
  CancelMessageMoveTaskCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../local/net.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { createAdminClients, uniqueName } from '../support/pipeline.ts';

/** Waits for the source's latest move task to reach `status`; returns that task. */
const taskEnded = async (
  sqs: ReturnType<typeof createAdminClients>['sqs'],
  SourceArn: string,
  status: 'COMPLETED' | 'CANCELLED' | 'FAILED',
) => {
  const latest = async () =>
    (await sqs.send(new ListMessageMoveTasksCommand({ SourceArn }))).Results?.[0];
  await waitFor(async () => (await latest())?.Status === status, {
    timeoutMs: DEADLINE_MS,
    what: `the move task to end ${status}`,
  });
  return latest();
};

/** SQS message move tasks (DLQ redrive) as AWS documents them, through the local edge. */
describe('SQS message move tasks on the local edge', () => {
  const setup = async () => {
    const { sqs } = createAdminClients();
    const arnOf = async (QueueUrl: string) =>
      (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] })))
        .Attributes?.QueueArn ?? '';
    const dlqUrl =
      (await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('dlq') }))).QueueUrl ?? '';
    const dlqArn = await arnOf(dlqUrl);
    const sourceUrl =
      (
        await sqs.send(
          new CreateQueueCommand({
            QueueName: uniqueName('source'),
            Attributes: {
              RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 1 }),
            },
          }),
        )
      ).QueueUrl ?? '';
    const count = async (QueueUrl: string) => {
      const a = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      return (
        Number(a.Attributes?.ApproximateNumberOfMessages) +
        Number(a.Attributes?.ApproximateNumberOfMessagesNotVisible)
      );
    };
    return { sqs, dlqUrl, dlqArn, sourceUrl, sourceArn: await arnOf(sourceUrl), count };
  };

  const fill = async (
    sqs: ReturnType<typeof createAdminClients>['sqs'],
    QueueUrl: string,
    n: number,
  ) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++)
      ids.push(
        (await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: `m-${i}` }))).MessageId ??
          '',
      );
    return ids;
  };

  it('moves every message of a dead-letter queue back to its source, with new message ids', async () => {
    const { sqs, dlqUrl, dlqArn, sourceUrl, count } = await setup();
    const oldIds = await fill(sqs, dlqUrl, 25);
    const { TaskHandle } = await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: dlqArn }));
    expect(TaskHandle).toBeTruthy();
    const task = await taskEnded(sqs, dlqArn, 'COMPLETED');
    expect(task).toMatchObject({
      ApproximateNumberOfMessagesMoved: 25,
      ApproximateNumberOfMessagesToMove: 25,
    });
    expect(await count(dlqUrl)).toBe(0);
    expect(await count(sourceUrl)).toBe(25);
    const moved = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: sourceUrl, MaxNumberOfMessages: 10 }),
    );
    for (const m of moved.Messages ?? []) {
      expect(oldIds).not.toContain(m.MessageId);
      expect(m.Body).toMatch(/^m-\d+$/);
    }
  });

  it('moves to an explicit DestinationArn when one is given', async () => {
    const { sqs, dlqUrl, dlqArn, count } = await setup();
    const otherUrl =
      (await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('other') }))).QueueUrl ?? '';
    const otherArn = (
      await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: otherUrl, AttributeNames: ['QueueArn'] }),
      )
    ).Attributes?.QueueArn;
    await fill(sqs, dlqUrl, 3);
    await sqs.send(
      new StartMessageMoveTaskCommand({ SourceArn: dlqArn, DestinationArn: otherArn }),
    );
    await waitFor(async () => (await count(otherUrl)) === 3, {
      timeoutMs: DEADLINE_MS,
      what: 'three messages in the destination',
    });
  });

  it('refuses a second task on a source queue while one is running, and a source that is not a dead-letter queue', async () => {
    const { sqs, dlqUrl, dlqArn, sourceArn } = await setup();
    await fill(sqs, dlqUrl, 20);
    await sqs.send(
      new StartMessageMoveTaskCommand({ SourceArn: dlqArn, MaxNumberOfMessagesPerSecond: 1 }),
    );
    await expect(sqs.send(new StartMessageMoveTaskCommand({ SourceArn: dlqArn }))).rejects.toThrow(
      /already a task running/,
    );
    await expect(
      sqs.send(new StartMessageMoveTaskCommand({ SourceArn: sourceArn })),
    ).rejects.toThrow(/Dead Letter Queue/);
  });

  it('stops a running task when it is cancelled and reports it as cancelled', async () => {
    const { sqs, dlqUrl, dlqArn, count } = await setup();
    await fill(sqs, dlqUrl, 20);
    const { TaskHandle } = await sqs.send(
      new StartMessageMoveTaskCommand({ SourceArn: dlqArn, MaxNumberOfMessagesPerSecond: 2 }),
    );
    await sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle }));
    await taskEnded(sqs, dlqArn, 'CANCELLED');
    expect(await count(dlqUrl)).toBeGreaterThan(10);
  });

  it('keeps what the destination refuses in the dead-letter queue and fails the task naming it, after moving the rest', async () => {
    const { sqs, dlqUrl, dlqArn, count } = await setup();
    // A destination that takes at most 1 KiB a message: one of the six is larger.
    const smallUrl =
      (
        await sqs.send(
          new CreateQueueCommand({
            QueueName: uniqueName('small'),
            Attributes: { MaximumMessageSize: '1024' },
          }),
        )
      ).QueueUrl ?? '';
    const smallArn = (
      await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: smallUrl, AttributeNames: ['QueueArn'] }),
      )
    ).Attributes?.QueueArn;
    await fill(sqs, dlqUrl, 5);
    await sqs.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: 'x'.repeat(2048) }));
    await sqs.send(
      new StartMessageMoveTaskCommand({ SourceArn: dlqArn, DestinationArn: smallArn }),
    );
    const task = await taskEnded(sqs, dlqArn, 'FAILED');
    expect(task).toMatchObject({
      ApproximateNumberOfMessagesMoved: 5,
      FailureReason: 'could not send 1 messages to the destination',
    });
    expect(await count(smallUrl)).toBe(5);
    expect(await count(dlqUrl)).toBe(1);
  });

  it('moves a FIFO dead-letter queue back into each message’s group, identical bodies included', async () => {
    const { sqs } = createAdminClients();
    const fifo = async (name: string, attributes: Record<string, string> = {}) => {
      const url =
        (
          await sqs.send(
            new CreateQueueCommand({
              QueueName: `${uniqueName(name)}.fifo`,
              Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true', ...attributes },
            }),
          )
        ).QueueUrl ?? '';
      const arn =
        (
          await sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
          )
        ).Attributes?.QueueArn ?? '';
      return { url, arn };
    };
    const dlq = await fifo('dlq');
    const source = await fifo('source', {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 1 }),
    });
    // Three notifications of one hour, as the aggregate queue's DLQ may hold them: two in one
    // group, one in another.
    const sent = [
      { group: 'g1', dedup: 'a' },
      { group: 'g1', dedup: 'b' },
      { group: 'g2', dedup: 'c' },
    ];
    for (const s of sent)
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: dlq.url,
          MessageBody: 'hour=2026-10-01T09',
          MessageGroupId: s.group,
          MessageDeduplicationId: s.dedup,
        }),
      );
    await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: dlq.arn }));
    await taskEnded(sqs, dlq.arn, 'COMPLETED');
    // Every one arrived: none taken for a duplicate of another.
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: source.url,
        AttributeNames: ['ApproximateNumberOfMessages'],
      }),
    );
    expect(Attributes?.ApproximateNumberOfMessages).toBe('3');
    const groups: string[] = [];
    await waitFor(
      async () => {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: source.url,
            MaxNumberOfMessages: 10,
            MessageSystemAttributeNames: ['MessageGroupId'],
          }),
        );
        for (const m of Messages) {
          groups.push(m.Attributes?.MessageGroupId ?? 'none');
          await sqs.send(
            new DeleteMessageCommand({ QueueUrl: source.url, ReceiptHandle: m.ReceiptHandle }),
          );
        }
        return groups.length >= sent.length;
      },
      { timeoutMs: DEADLINE_MS, what: 'three messages in the source queue' },
    );
    expect(groups.sort()).toEqual(['g1', 'g1', 'g2']);
  });

  it('keeps each message’s attributes', async () => {
    const { sqs, dlqUrl, dlqArn, sourceUrl, count } = await setup();
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: dlqUrl,
        MessageBody: 'with attributes',
        MessageAttributes: { producer: { DataType: 'String', StringValue: 'billing' } },
      }),
    );
    await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: dlqArn }));
    await waitFor(async () => (await count(sourceUrl)) === 1, {
      timeoutMs: DEADLINE_MS,
      what: 'the message in the source queue',
    });
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: sourceUrl, MessageAttributeNames: ['All'] }),
    );
    expect(Messages[0]?.MessageAttributes).toEqual({
      producer: { DataType: 'String', StringValue: 'billing' },
    });
  });
});
