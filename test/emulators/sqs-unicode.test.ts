import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { adminClients } from '../../local/clients.ts';
import { LOCAL_REGION } from '../../local/emulators.ts';
import { useEmulators } from '../support/emulators.ts';
import { uniqueName } from '../support/pipeline.ts';

// Emulators of this file's own, so that the probe's verdict can be read.
const emulators = useEmulators();

/** Message bodies with any character SQS accepts, through the local edge. */
describe('SQS message bodies on the local edge', () => {
  it('says it accepts supplementary characters only after a real send proved it', () => {
    expect(emulators().gaps.supplementaryCharacters).toBe(true);
  });

  const queue = async () => {
    const { sqs } = adminClients(emulators().endpoint, LOCAL_REGION);
    const url = (await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('unicode') })))
      .QueueUrl;
    return { sqs, url: url ?? '' };
  };

  it('accepts supplementary characters (emoji) and the allowed controls as SQS does, and returns them intact', async () => {
    const { sqs, url } = await queue();
    // The three controls SQS allows (tab, line feed, carriage return) raw, as a producer may send them.
    const body = `${JSON.stringify({ note: 'shipped \u{1F4E6} to 🇫🇷, paid 💶', tail: '\u{10FFFD}' })}\t\r\n`;
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [{ Id: 'a', MessageBody: `${body} again` }],
      }),
    );
    // The SDK checks each MD5 of body against what it sent and received.
    const got = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    expect(got.Messages?.map((m) => m.Body).sort()).toEqual([body, `${body} again`]);
  });

  it('still refuses what SQS refuses: a lone surrogate, a control character', async () => {
    const { sqs, url } = await queue();
    for (const body of ['lone \uD83D half', 'bell \u0007']) {
      await expect(
        sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body })),
      ).rejects.toThrow(/Invalid characters/);
    }
  });
});
