/** An operator's peek at a queue (the console's poll), held until the test lets it go. */
import {
  ChangeMessageVisibilityCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/**
 * Receives one message of `queueUrl` and keeps it in flight, where no move task takes it, until
 * `letGo` makes it visible again: a test lets it go once the command under test says it waits
 * for it, so the scenario holds whatever the machine's load (a peek of a few seconds may end
 * before a command on a busy machine has even started).
 */
export const peek = async (sqs: SQSClient, queueUrl: string) => {
  const received = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, VisibilityTimeout: 600, WaitTimeSeconds: 1 }),
  );
  const handle = received.Messages?.[0]?.ReceiptHandle;
  if (received.Messages?.length !== 1 || handle === undefined)
    throw new Error(`expected one message to peek at in ${queueUrl}`);
  let sent: Promise<unknown> | undefined;
  return {
    /** Makes the message visible again; only the first call does anything. */
    letGo: () => {
      sent ??= sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: queueUrl,
          ReceiptHandle: handle,
          VisibilityTimeout: 0,
        }),
      );
    },
    /** Resolves once the message was let go (at once when it was not). */
    settled: async () => {
      await sent;
    },
  };
};
