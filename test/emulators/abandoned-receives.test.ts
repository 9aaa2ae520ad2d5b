/**
 * A long poll whose caller left takes nothing from the queue for good: fauxqs does not cancel a
 * receive whose connection closed, so the edge lets it end and makes what it took visible again
 * at once, instead of hidden for the queue's visibility timeout. (Through a deleted trigger's
 * poller, on the JSON protocol: `test/local/lambda-api.test.ts`.)
 */
import { request } from 'node:http';
import {
  CreateQueueCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../local/emulators.ts';
import { waitFor } from '../../local/net.ts';
import { useEmulators } from '../support/emulators.ts';
import { uniqueName } from '../support/names.ts';

const emulators = useEmulators();

describe('a long poll abandoned by its caller', () => {
  it('gives back at once what a query-protocol receive took after its caller left', async () => {
    const edge = emulators();
    const sqs = new SQSClient({
      endpoint: edge.endpoint,
      region: edge.region,
      credentials: LOCAL_CREDENTIALS,
    });
    // Five minutes: a message hidden by the abandoned receive would stay hidden past the wait.
    const { QueueUrl = '' } = await sqs.send(
      new CreateQueueCommand({
        QueueName: uniqueName('abandoned'),
        Attributes: { VisibilityTimeout: '300' },
      }),
    );
    // The edge answers the query protocol through itself: its JSON receive passes the hooks.
    let arrived = () => {};
    const reached = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const remove = edge.addHooks({
      beforeCall: (call) => {
        if (call.action === 'ReceiveMessage') arrived();
        return 'forward';
      },
    });
    const url = new URL(edge.endpoint);
    const caller = request({
      host: url.hostname,
      port: url.port,
      method: 'POST',
      path: '/',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    caller.on('error', () => {}); // the test hangs up on purpose
    caller.end(
      new URLSearchParams({
        Action: 'ReceiveMessage',
        QueueUrl,
        WaitTimeSeconds: '20',
        Version: '2012-11-05',
      }).toString(),
    );
    await reached;
    remove();
    caller.destroy();
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'taken by nobody' }));

    let received: Message | undefined;
    await waitFor(
      async () => {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl,
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ['ApproximateReceiveCount'],
          }),
        );
        received = Messages[0];
        return received !== undefined;
      },
      { timeoutMs: 60_000, what: 'the message to be visible again' },
    );
    expect(received?.Body).toBe('taken by nobody');
    // Received twice: once by the abandoned long poll, then here.
    expect(received?.Attributes?.ApproximateReceiveCount).toBe('2');
  });
});
