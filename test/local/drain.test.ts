import {
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { drainQueues } from '../../local/drain.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { createAdminClients, uniqueName } from '../support/pipeline.ts';

describe('draining queues by their depth (onceflow drain)', () => {
  it('waits for empty readings in a row when an approximate depth reads empty while a message is queued', async () => {
    const { sqs } = createAdminClients();
    const QueueUrl =
      (await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('drain') }))).QueueUrl ?? '';
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'queued' }));
    // SQS's depths are approximate: on AWS a queue holding a message can read empty. The
    // emulator's are exact, so the readings SQS could give are played here: empty, empty, one,
    // empty again, then the truth.
    let reading = 0;
    const approximate = new Set([1, 2, 4]);
    sqs.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === 'GetQueueAttributesCommand' && approximate.has(++reading)) {
          const output = out.output as { Attributes?: Record<string, string> };
          output.Attributes = Object.fromEntries(
            Object.keys(output.Attributes ?? {}).map((name) => [name, '0']),
          );
        }
        return out;
      },
      { step: 'initialize', name: 'approximateDepth' },
    );
    let consumed = false;
    let settled = false;
    const drained = drainQueues(sqs, [QueueUrl], { timeoutMs: DEADLINE_MS }).then(() => {
      settled = true;
      return consumed;
    });
    // The consumer takes the message only after the readings above (or once the drain ended).
    while (reading < 6 && !settled) await new Promise((r) => setTimeout(r, 50));
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl }));
    for (const m of Messages)
      await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: m.ReceiptHandle }));
    consumed = Messages.length === 1;
    // Resolved only once the message was consumed: never on a reading that was not the truth.
    expect(await drained).toBe(true);
  });
});
