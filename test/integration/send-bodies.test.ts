import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { sendBodies } from '../../adapters/sqs.ts';
import { FaultInjector } from '../../harness/faults.ts';
import { createAdminClients, uniqueName } from '../support/pipeline.ts';

/** Counts the SendMessageBatch requests a client has in flight, and the most at once. */
const countInFlight = (sqs: SQSClient) => {
  const count = { now: 0, most: 0, requests: 0 };
  sqs.middlewareStack.add(
    (next) => async (args) => {
      count.now++;
      count.requests++;
      count.most = Math.max(count.most, count.now);
      try {
        return await next(args);
      } finally {
        count.now--;
      }
    },
    { step: 'initialize', name: 'countInFlight' },
  );
  return count;
};

/** Every body on the queue, each as often as it was received. */
const receiveAll = async (sqs: SQSClient, QueueUrl: string, expected: number) => {
  const bodies: string[] = [];
  while (bodies.length < expected) {
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) break;
    bodies.push(...messages.map((m) => m.Body ?? ''));
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl,
        Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
  return bodies;
};

const queue = async (sqs: SQSClient, fifo = false) =>
  (
    await sqs.send(
      new CreateQueueCommand({
        QueueName: `${uniqueName('send')}${fifo ? '.fifo' : ''}`,
        ...(fifo ? { Attributes: { FifoQueue: 'true' } } : {}),
      }),
    )
  ).QueueUrl ?? '';

describe('sending bodies', () => {
  // 120 bodies of 1 to 3 KB, ten requests' worth and more, and one over the limit below.
  const bodies = Array.from({ length: 120 }, (_, i) =>
    `${i}:`.padEnd(1_000 + (i % 3) * 1_000, 'x'),
  );
  const oversize = 'o'.repeat(5_000);

  it('sends each body once with several requests in flight, never more than asked, and names the one over the limit', async () => {
    const { sqs } = createAdminClients();
    const url = await queue(sqs);
    const count = countInFlight(sqs);
    const { sent, refused } = await sendBodies(sqs, url, [...bodies, oversize], {
      inFlight: 4,
      maxMessageBytes: 4_096,
    });
    expect(sent).toBe(bodies.length);
    expect(refused).toEqual([{ index: bodies.length, reason: expect.stringContaining('5000') }]);
    expect(count.requests).toBe(12);
    expect(count.most).toBe(4);
    const received = await receiveAll(sqs, url, bodies.length);
    expect(received.sort()).toEqual([...bodies].sort());
  });

  it('sends one request at a time by default, in the order given', async () => {
    const { sqs } = createAdminClients();
    const url = await queue(sqs, true);
    const count = countInFlight(sqs);
    const { sent } = await sendBodies(sqs, url, bodies, {
      fifo: (i) => ({ groupId: 'g', deduplicationId: String(i) }),
    });
    expect(sent).toBe(bodies.length);
    expect(count.most).toBe(1);
    // One group of a FIFO queue gives the messages back in the order they were sent.
    expect(await receiveAll(sqs, url, bodies.length)).toEqual(bodies);
  });

  it('keeps to the rate asked: no request leaves before its entries’ share of the time', async () => {
    const { sqs } = createAdminClients();
    const url = await queue(sqs);
    const starts: number[] = [];
    sqs.middlewareStack.add(
      (next) => async (args) => {
        starts.push(performance.now());
        return next(args);
      },
      { step: 'initialize', name: 'requestStarts' },
    );
    const began = performance.now();
    const { sent } = await sendBodies(sqs, url, bodies.slice(0, 30), { rate: 20 });
    expect(sent).toBe(30);
    // 20 a second: the requests of 10 leave after 0.5, 1 and 1.5 s at the earliest (a busy
    // machine can only make them later).
    // (Timers round to the millisecond: 2 ms of slack.)
    expect(starts).toHaveLength(3);
    for (const [i, t] of starts.entries())
      expect(t - began, `request ${i + 1}`).toBeGreaterThanOrEqual((i + 1) * 500 - 2);
  });

  it('refuses several requests in flight for a FIFO queue, whose groups need their order', async () => {
    const { sqs } = createAdminClients();
    const url = await queue(sqs, true);
    const count = countInFlight(sqs);
    await expect(
      sendBodies(sqs, url, bodies, {
        inFlight: 2,
        fifo: (i) => ({ groupId: 'g', deduplicationId: String(i) }),
      }),
    ).rejects.toThrow(/one request at a time, in order/);
    expect(count.requests).toBe(0);
  });

  it('sends again, once each, the entries SQS failed on its side, and reports all sent', async () => {
    const { sqs } = createAdminClients();
    const url = await queue(sqs);
    // Two requests each have their first entry failed on SQS's side; the rest of them go.
    const faults = new FaultInjector()
      .add({ site: 'SendMessageBatch', kind: 'entry-failure' })
      .add({ site: 'SendMessageBatch', kind: 'entry-failure', nth: 3 });
    faults.attach(sqs);
    const some = bodies.slice(0, 30);
    const { sent, refused } = await sendBodies(sqs, url, some);
    expect(faults.fired).toEqual([
      'entry-failure@SendMessageBatch',
      'entry-failure@SendMessageBatch',
    ]);
    expect({ sent, refused }).toEqual({ sent: some.length, refused: [] });
    expect((await receiveAll(sqs, url, some.length)).sort()).toEqual([...some].sort());
  });

  it('names each body SQS refuses (a control character) and still sends the others', async () => {
    const { sqs } = createAdminClients();
    const url = await queue(sqs);
    const some = [...bodies.slice(0, 5), 'bell\u0007', ...bodies.slice(5, 12)];
    const { sent, refused } = await sendBodies(sqs, url, some);
    expect(sent).toBe(some.length - 1);
    expect(refused).toEqual([
      { index: 5, reason: expect.stringMatching(/^InvalidMessageContents/) },
    ]);
    expect((await receiveAll(sqs, url, some.length - 1)).sort()).toEqual(
      some.filter((_, i) => i !== 5).sort(),
    );
  });
});
