import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { adminClients } from '../../local/clients.ts';
import { LOCAL_REGION } from '../../local/emulators.ts';
import { useEmulators } from '../support/emulators.ts';
import { uniqueName } from '../support/pipeline.ts';

// Emulators of this file's own, so that the probe's verdict can be read.
const emulators = useEmulators();

const fifoQueue = async () => {
  const { sqs } = adminClients(emulators().endpoint, LOCAL_REGION);
  const created = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${uniqueName('groups')}.fifo`,
      Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
    }),
  );
  return new FifoQueue(sqs, created.QueueUrl ?? '');
};

class FifoQueue {
  readonly #sqs: SQSClient;
  readonly #url: string;
  constructor(sqs: SQSClient, url: string) {
    this.#sqs = sqs;
    this.#url = url;
  }
  async send(group: string, body: string) {
    await this.#sqs.send(
      new SendMessageCommand({ QueueUrl: this.#url, MessageBody: body, MessageGroupId: group }),
    );
  }
  async receive(max: number, visibilityTimeout?: number): Promise<Message[]> {
    const out = await this.#sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.#url,
        MaxNumberOfMessages: max,
        MessageSystemAttributeNames: ['All'],
        ...(visibilityTimeout === undefined ? {} : { VisibilityTimeout: visibilityTimeout }),
      }),
    );
    return out.Messages ?? [];
  }
  async delete(message: Message) {
    await this.#sqs.send(
      new DeleteMessageCommand({ QueueUrl: this.#url, ReceiptHandle: message.ReceiptHandle }),
    );
  }
  async release(message: Message) {
    await this.#sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: this.#url,
        ReceiptHandle: message.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
  }
}

const bodies = (messages: readonly Message[]) => messages.map((m) => m.Body);

/** FIFO receives on the local edge, as SQS gives them. */
describe('FIFO receives on the local edge', () => {
  it('says a receive gives several messages of a group only after a real receive proved it', () => {
    expect(emulators().gaps.fifoGroupReceives).toBe(true);
  });

  it('gives as many messages of one group as a receive holds, in order, before the next group', async () => {
    const q = await fifoQueue();
    for (const [group, body] of [
      ['a', 'a1'],
      ['b', 'b1'],
      ['a', 'a2'],
      ['a', 'a3'],
      ['b', 'b2'],
    ] as const)
      await q.send(group, body);
    expect(bodies(await q.receive(4))).toEqual(['a1', 'a2', 'a3', 'b1']);
    // Both groups have a message in flight: neither gives another.
    expect(await q.receive(10)).toEqual([]);
  });

  it('keeps a group closed until every message a receive gave is deleted or visible again, then gives them back in order', async () => {
    const q = await fifoQueue();
    for (const body of ['a1', 'a2', 'a3']) await q.send('a', body);
    const [a1, a2, a3] = (await q.receive(10)) as [Message, Message, Message];
    await q.send('a', 'a4');
    await q.delete(a1);
    expect(await q.receive(10)).toEqual([]);
    // Released in the order received, each to the front of its group: they still come back in
    // the order they were sent, before a4.
    await q.release(a2);
    expect(await q.receive(10)).toEqual([]);
    await q.release(a3);
    const again = await q.receive(10);
    expect(bodies(again)).toEqual(['a2', 'a3', 'a4']);
    expect(again.map((m) => m.Attributes?.ApproximateReceiveCount)).toEqual(['2', '2', '1']);
  });

  it('gives each message once to a receive with no visibility timeout', async () => {
    const q = await fifoQueue();
    for (const body of ['a1', 'a2', 'a3']) await q.send('a', body);
    // Visible again at once, a message must not come twice in the one answer.
    const got = bodies(await q.receive(10, 0));
    expect(got[0]).toBe('a1');
    expect(new Set(got).size).toBe(got.length);
  });

  it('gives every group’s messages once each, in the order sent, whatever the receives, deletes and releases', async () => {
    const group = fc.constantFrom('a', 'b');
    // Sends weigh most, so that groups hold runs for receives to take several of.
    const step = fc.oneof(
      { arbitrary: fc.record({ kind: fc.constant('send' as const), group }), weight: 3 },
      {
        arbitrary: fc.record({
          kind: fc.constant('receive' as const),
          max: fc.integer({ min: 1, max: 10 }),
        }),
        weight: 2,
      },
      {
        arbitrary: fc.record({
          kind: fc.constant('settle' as const),
          group,
          how: fc.constantFrom('delete', 'release'),
          backwards: fc.boolean(),
        }),
        weight: 2,
      },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        const q = await fifoQueue();
        // The model: each group's waiting bodies in the order sent, and its messages in flight.
        const waiting = new Map<string, string[]>();
        const inFlight = new Map<string, Message[]>();
        const deleted = new Map<string, string[]>();
        const sent = new Map<string, string[]>();
        let n = 0;
        const groupOf = (m: Message) => (m.Body ?? '').slice(0, 1);
        const settle = async (g: string, how: 'delete' | 'release', backwards: boolean) => {
          const messages = inFlight.get(g) ?? [];
          for (const m of backwards ? [...messages].reverse() : messages)
            await (how === 'delete' ? q.delete(m) : q.release(m));
          if (how === 'delete')
            deleted.set(g, [...(deleted.get(g) ?? []), ...bodies(messages).map(String)]);
          else waiting.set(g, [...bodies(messages).map(String), ...(waiting.get(g) ?? [])]);
          inFlight.delete(g);
        };
        const receive = async (max: number) => {
          const free = [...waiting.keys()].filter((g) => !inFlight.has(g));
          const got = await q.receive(max);
          expect(got.length).toBeLessThanOrEqual(max);
          const runs: string[] = [];
          for (const m of got) if (runs.at(-1) !== groupOf(m)) runs.push(groupOf(m));
          // Each group's messages come together, from a group with none in flight, from its head.
          expect(new Set(runs).size).toBe(runs.length);
          for (const g of runs) {
            expect(inFlight.has(g)).toBe(false);
            const taken = bodies(got.filter((m) => groupOf(m) === g)).map(String);
            expect(taken).toEqual((waiting.get(g) ?? []).slice(0, taken.length));
            waiting.set(g, (waiting.get(g) ?? []).slice(taken.length));
            inFlight.set(
              g,
              got.filter((m) => groupOf(m) === g),
            );
          }
          // Only the last run may leave messages of its group behind, and only when full.
          for (const g of runs.slice(0, -1)) expect(waiting.get(g)).toEqual([]);
          if (got.length < max) for (const g of free) expect(waiting.get(g), g).toEqual([]);
        };
        for (const s of steps) {
          if (s.kind === 'send') {
            const body = `${s.group}${++n}`;
            await q.send(s.group, body);
            waiting.set(s.group, [...(waiting.get(s.group) ?? []), body]);
            sent.set(s.group, [...(sent.get(s.group) ?? []), body]);
          } else if (s.kind === 'receive') await receive(s.max);
          else await settle(s.group, s.how, s.backwards);
        }
        // Drain: what was not deleted comes out. Every group's messages were deleted once each,
        // in the order sent.
        for (const g of [...inFlight.keys()]) await settle(g, 'release', true);
        for (let got = await q.receive(10); got.length > 0; got = await q.receive(10))
          for (const m of got) {
            await q.delete(m);
            deleted.set(groupOf(m), [...(deleted.get(groupOf(m)) ?? []), String(m.Body)]);
          }
        for (const [g, order] of sent) expect(deleted.get(g), g).toEqual(order);
      }),
      { numRuns: 100 },
    );
  });
});
