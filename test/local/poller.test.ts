import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { sendBodies } from '../../adapters/sqs.ts';
import { LOCAL_REGION } from '../../local/emulators.ts';
import { parseFilterCriteria } from '../../local/event-filter.ts';
import { INVOKE_PAYLOAD_BYTES } from '../../local/lambda-quotas.ts';
import { waitFor } from '../../local/net.ts';
import { failedIdsOf } from '../../local/sqs-event.ts';
import { type BatchReport, type PollerOptions, SqsPoller } from '../../local/sqs-poller.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { createAdminClients, uniqueName } from '../support/pipeline.ts';

describe('reading a partial batch response as Lambda does', () => {
  const ids = ['a', 'b', 'c'];
  it.each([
    ['an undefined response', undefined, []],
    ['a null response', null, []],
    ['an empty object', {}, []],
    ['a null list', { batchItemFailures: null }, []],
    ['an empty list', { batchItemFailures: [] }, []],
    [
      'two listed ids',
      { batchItemFailures: [{ itemIdentifier: 'a' }, { itemIdentifier: 'c' }] },
      ['a', 'c'],
    ],
  ])('retries exactly the listed messages for %s', (_, response, expected) => {
    expect(failedIdsOf(response, ids)).toEqual({ ids: expected });
  });

  it.each([
    ['an empty itemIdentifier', { batchItemFailures: [{ itemIdentifier: '' }] }],
    ['a null itemIdentifier', { batchItemFailures: [{ itemIdentifier: null }] }],
    ['a wrong key', { batchItemFailures: [{ id: 'a' }] }],
    ['an id not in the batch', { batchItemFailures: [{ itemIdentifier: 'zzz' }] }],
    ['a list that is not a list', { batchItemFailures: 'a' }],
    ['a response that is not an object', 'ok'],
  ])('fails the whole batch for %s', (_, response) => {
    const result = failedIdsOf(response, ids);
    expect(result.ids).toEqual(ids);
    expect(result.invalid).toBeTruthy();
  });
});

describe('the local SQS poller', () => {
  const pollers: SqsPoller[] = [];
  afterEach(async () => {
    await Promise.all(pollers.splice(0).map((p) => p.stop()));
  });

  const setup = async (attributes: Record<string, string> = {}, dlq = false) => {
    const { sqs } = createAdminClients();
    const arnOf = async (QueueUrl: string) =>
      (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] })))
        .Attributes?.QueueArn ?? '';
    let dlqUrl: string | undefined;
    if (dlq) {
      dlqUrl =
        (await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('dlq') }))).QueueUrl ?? '';
      attributes.RedrivePolicy = JSON.stringify({
        deadLetterTargetArn: await arnOf(dlqUrl),
        maxReceiveCount: 2,
      });
    }
    const fifo = attributes.FifoQueue === 'true';
    const queueUrl =
      (
        await sqs.send(
          new CreateQueueCommand({
            QueueName: `${uniqueName('polled')}${fifo ? '.fifo' : ''}`,
            Attributes: attributes,
          }),
        )
      ).QueueUrl ?? '';
    const send = async (bodies: string[]) => {
      for (let i = 0; i < bodies.length; i += 10) {
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: bodies
              .slice(i, i + 10)
              .map((MessageBody, j) => ({ Id: String(j), MessageBody })),
          }),
        );
      }
    };
    const depth = async (url = queueUrl) => {
      const a =
        (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] })))
          .Attributes ?? {};
      return (
        Number(a.ApproximateNumberOfMessages) + Number(a.ApproximateNumberOfMessagesNotVisible)
      );
    };
    const reports: BatchReport[] = [];
    const poll = (options: Partial<PollerOptions> & Pick<PollerOptions, 'invoke'>) => {
      const poller = new SqsPoller({
        sqs,
        queueUrl,
        queueArn: 'arn:aws:sqs:us-east-1:000000000000:polled',
        region: LOCAL_REGION,
        batchSize: 10,
        batchingWindowSeconds: 0,
        maxConcurrency: 1,
        reportBatchItemFailures: true,
        onBatch: (r) => {
          reports.push(r);
        },
        ...options,
      });
      pollers.push(poller);
      poller.start();
      return poller;
    };
    /** Bodies of any size, packed by size; on a FIFO queue in the groups `groupOf` names. */
    const sendLarge = async (bodies: string[], groupOf = (_: number) => 'g') => {
      const { refused } = await sendBodies(sqs, queueUrl, bodies, {
        ...(fifo ? { fifo: (i) => ({ groupId: groupOf(i), deduplicationId: String(i) }) } : {}),
      });
      expect(refused).toEqual([]);
    };
    return { sqs, queueUrl, dlqUrl, send, sendLarge, depth, reports, poll };
  };

  /** Ten bodies at SQS's 1 MiB maximum: 10 MiB as one event, where Lambda takes 6 MB. */
  const fullSizeBodies = () =>
    Array.from({ length: 10 }, (_, i) => String(i).padEnd(1_048_576, 'x'));
  const eventBytes = (event: SQSEvent) => Buffer.byteLength(JSON.stringify(event));

  const bodiesOf = (event: SQSEvent) => event.Records.map((r) => r.body);

  it('deletes the succeeded messages and returns only the reported failures to the queue', async () => {
    const q = await setup();
    await q.send(['ok-1', 'fail-1', 'ok-2']);
    const seen: string[] = [];
    q.poll({
      retryDelaySeconds: 0,
      invoke: async (_, event) => {
        seen.push(...bodiesOf(event));
        return {
          batchItemFailures: event.Records.filter(
            (r) => r.body === 'fail-1' && r.attributes.ApproximateReceiveCount === '1',
          ).map((r) => ({ itemIdentifier: r.messageId })),
        };
      },
    });
    await waitFor(async () => (await q.depth()) === 0, {
      timeoutMs: DEADLINE_MS,
      what: 'the queue to empty',
    });
    expect(seen.filter((b) => b === 'fail-1')).toHaveLength(2);
    expect(seen.filter((b) => b === 'ok-1')).toHaveLength(1);
    expect(seen.filter((b) => b === 'ok-2')).toHaveLength(1);
  });

  it('deletes unseen the messages no filter matches, and invokes only the others', async () => {
    const q = await setup();
    const bodies = [
      JSON.stringify({ kind: 'order', amount: 25 }),
      JSON.stringify({ kind: 'refund', amount: 25 }),
      JSON.stringify({ kind: 'order', amount: 0 }),
      'ping',
      'not {json',
    ];
    await q.send(bodies);
    const seen: string[] = [];
    q.poll({
      // An order with a positive amount, or the plain string `ping`.
      filters: parseFilterCriteria({
        Filters: [
          { Pattern: '{"body":{"kind":["order"],"amount":[{"numeric":[">",0]}]}}' },
          { Pattern: '{"body":["ping"]}' },
        ],
      }),
      invoke: async (_, event) => {
        seen.push(...bodiesOf(event));
        return { batchItemFailures: [] };
      },
    });
    await waitFor(async () => (await q.depth()) === 0, {
      timeoutMs: DEADLINE_MS,
      what: 'the queue to empty',
    });
    expect(seen.sort()).toEqual([bodies[0], 'ping'].sort());
    // Invocations report only what they were given.
    expect(q.reports.flatMap((r) => r.messageIds)).toHaveLength(2);
  });

  it('filters from its next receive on when its FilterCriteria change while it runs', async () => {
    const q = await setup();
    const seen: string[] = [];
    const poller = q.poll({
      invoke: async (_, event) => {
        seen.push(...bodiesOf(event));
        return {};
      },
    });
    poller.configure({
      filters: parseFilterCriteria({ Filters: [{ Pattern: '{"body":["ping"]}' }] }),
    });
    await q.send(['ping', 'pong']);
    const emptied = () =>
      waitFor(async () => (await q.depth()) === 0, {
        timeoutMs: DEADLINE_MS,
        what: 'the queue to empty',
      });
    await emptied();
    expect(seen).toEqual(['ping']);
    // Filters removed: every message is invoked again.
    poller.configure({ filters: [] });
    await q.send(['pong']);
    await emptied();
    expect(seen).toEqual(['ping', 'pong']);
  });

  it('returns the whole batch when the function throws, and when it answers an unknown id', async () => {
    for (const fail of [
      () => Promise.reject(new Error('boom')),
      () => Promise.resolve({ batchItemFailures: [{ itemIdentifier: 'nope' }] }),
    ]) {
      const q = await setup();
      await q.send(['m-1', 'm-2']);
      let calls = 0;
      q.poll({
        retryDelaySeconds: 0,
        invoke: async () => {
          calls++;
          return calls === 1 ? fail() : {};
        },
      });
      await waitFor(async () => (await q.depth()) === 0, {
        timeoutMs: DEADLINE_MS,
        what: 'the queue to empty',
      });
      expect(q.reports[0]?.failedIds).toHaveLength(2);
      expect(q.reports[0]?.error).toBeTruthy();
    }
  });

  it('ignores the response when partial batch responses are off', async () => {
    const q = await setup();
    await q.send(['m-1']);
    q.poll({
      reportBatchItemFailures: false,
      invoke: async (_, event) => ({
        batchItemFailures: [{ itemIdentifier: event.Records[0]?.messageId }],
      }),
    });
    await waitFor(async () => (await q.depth()) === 0, {
      timeoutMs: DEADLINE_MS,
      what: 'the queue to empty',
    });
    expect(q.reports.map((r) => r.failedIds)).toEqual([[]]);
  });

  it('stops reading partial batch responses once ReportBatchItemFailures is turned off while it runs', async () => {
    const q = await setup();
    const poller = q.poll({
      invoke: async (_, event) => ({
        batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })),
      }),
    });
    poller.configure({ reportBatchItemFailures: false });
    await q.send(['m-1']);
    await waitFor(async () => (await q.depth()) === 0, {
      timeoutMs: DEADLINE_MS,
      what: 'the queue to empty',
    });
    expect(q.reports.map((r) => r.failedIds)).toEqual([[]]);
  });

  it('moves a message that keeps failing to the DLQ after maxReceiveCount receives', async () => {
    const q = await setup({}, true);
    await q.send(['poison']);
    const receives: string[] = [];
    q.poll({
      retryDelaySeconds: 0,
      invoke: async (_, event) => {
        receives.push(...event.Records.map((r) => r.attributes.ApproximateReceiveCount));
        throw new Error('always');
      },
    });
    await waitFor(async () => (await q.depth(q.dlqUrl)) === 1, {
      timeoutMs: DEADLINE_MS,
      what: 'the message in the DLQ',
    });
    expect(receives).toEqual(['1', '2']);
    expect(await q.depth()).toBe(0);
    const [moved] =
      (await q.sqs.send(new ReceiveMessageCommand({ QueueUrl: q.dlqUrl }))).Messages ?? [];
    expect(moved?.Body).toBe('poison');
  });

  it('gives the same message to a second invocation when the first outlives the visibility timeout', async () => {
    const q = await setup({ VisibilityTimeout: '1' });
    await q.send(['slow']);
    const running = new Map<number, string>();
    let overlapped = false;
    let second = () => {};
    const secondSeen = new Promise<void>((resolve) => {
      second = resolve;
    });
    q.poll({
      maxConcurrency: 2,
      invoke: async (slot, event) => {
        const id = event.Records[0]?.messageId ?? '';
        if ([...running.values()].includes(id)) {
          overlapped = true;
          second();
          return {};
        }
        running.set(slot, id);
        // The first invocation is still running when the message becomes visible again.
        await secondSeen;
        running.delete(slot);
        return {};
      },
    });
    await waitFor(() => overlapped, {
      timeoutMs: DEADLINE_MS,
      what: 'a concurrent duplicate invocation',
    });
    expect(overlapped).toBe(true);
  });

  it('fills batches up to the batch size within the batching window, and never exceeds the concurrency', async () => {
    const q = await setup();
    await q.send(Array.from({ length: 25 }, (_, i) => `m-${i}`));
    const sizes: number[] = [];
    const poller = q.poll({
      batchSize: 12,
      batchingWindowSeconds: 1,
      maxConcurrency: 2,
      invoke: async (_, event) => {
        sizes.push(event.Records.length);
        return {};
      },
    });
    await waitFor(async () => (await q.depth()) === 0 && poller.inFlight === 0, {
      timeoutMs: DEADLINE_MS,
      what: 'the queue to empty',
    });
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(25);
    expect(Math.max(...sizes)).toBe(12);
    expect(sizes.every((n) => n <= 12)).toBe(true);
    expect(poller.peakInFlight).toBeLessThanOrEqual(2);
  });

  it('invokes ten messages at the 1 MiB maximum over several events, none over Lambda’s 6 MB payload', async () => {
    const q = await setup();
    await q.sendLarge(fullSizeBodies());
    const events: { bytes: number; firsts: string[] }[] = [];
    const poller = q.poll({
      invoke: async (_, event) => {
        events.push({
          bytes: eventBytes(event),
          firsts: event.Records.map((r) => r.body[0] ?? ''),
        });
        return {};
      },
    });
    await waitFor(async () => (await q.depth()) === 0 && poller.inFlight === 0, {
      timeoutMs: DEADLINE_MS,
      what: 'the queue to empty',
    });
    expect(events.flatMap((e) => e.firsts).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => String(i)),
    );
    for (const e of events) expect(e.bytes).toBeLessThanOrEqual(INVOKE_PAYLOAD_BYTES);
  });

  it('invokes the other groups of a FIFO receive over 6 MB when a part of it fails', async () => {
    const q = await setup({ FifoQueue: 'true' });
    // Ten groups of one message each: every part is invoked, whichever fails.
    await q.sendLarge(fullSizeBodies(), (i) => `g${i}`);
    const attempts = new Map<string, number>();
    let calls = 0;
    const poller = q.poll({
      retryDelaySeconds: 0,
      invoke: async (_, event) => {
        expect(eventBytes(event)).toBeLessThanOrEqual(INVOKE_PAYLOAD_BYTES);
        for (const r of event.Records)
          attempts.set(r.body[0] ?? '', (attempts.get(r.body[0] ?? '') ?? 0) + 1);
        if (++calls === 1) throw new Error('the first part fails');
        return {};
      },
    });
    await waitFor(async () => (await q.depth()) === 0 && poller.inFlight === 0, {
      timeoutMs: DEADLINE_MS,
      what: 'the queue to empty',
    });
    // Only the failed part's messages ran twice; no report of messages left uninvoked.
    const twice = [...attempts].filter(([, n]) => n === 2).map(([first]) => first);
    expect(twice.length).toBeGreaterThan(0);
    expect([...attempts.values()].filter((n) => n === 1)).toHaveLength(10 - twice.length);
    expect(q.reports.filter((r) => r.error?.startsWith('not invoked'))).toEqual([]);
  });

  it('returns the rest of a group uninvoked when an earlier part of its FIFO receive fails', async () => {
    const q = await setup({ FifoQueue: 'true' });
    // One group: one receive gives all ten, as SQS does, over several 6 MB events.
    await q.sendLarge(fullSizeBodies(), () => 'g');
    const calls: string[][] = [];
    const poller = q.poll({
      retryDelaySeconds: 0,
      invoke: async (_, event) => {
        calls.push(event.Records.map((r) => r.body[0] ?? ''));
        if (calls.length === 1) throw new Error('the first part fails');
        return {};
      },
    });
    await waitFor(async () => (await q.depth()) === 0 && poller.inFlight === 0, {
      timeoutMs: DEADLINE_MS,
      what: 'the queue to empty',
    });
    const [failed, ...retried] = calls as [string[], ...string[][]];
    const order = Array.from({ length: 10 }, (_, i) => String(i));
    expect(failed).toEqual(order.slice(0, failed.length));
    expect(failed.length).toBeLessThan(10);
    // The rest went back without running ahead of the failed part, then all ran once, in order.
    const held = q.reports.filter((r) => r.error?.startsWith('not invoked'));
    expect(held.flatMap((r) => r.failedIds)).toHaveLength(10 - failed.length);
    expect(retried.flat()).toEqual(order);
  });

  it('runs more slots, then fewer, and larger batches when its settings change while it runs', async () => {
    const q = await setup();
    let running = 0;
    let held = true;
    const sizes: number[] = [];
    const slots: number[] = [];
    const poller = q.poll({
      batchSize: 1,
      maxConcurrency: 1,
      invoke: async (slot, event) => {
        running++;
        slots.push(slot);
        sizes.push(event.Records.length);
        while (held) await new Promise((r) => setTimeout(r, 10));
        running--;
        return {};
      },
    });
    await q.send(Array.from({ length: 6 }, (_, i) => `m-${i}`));
    const until = (what: string, check: () => boolean) =>
      waitFor(check, { timeoutMs: DEADLINE_MS, what });
    await until('one invocation', () => running === 1);
    poller.configure({ maxConcurrency: 3 });
    await until('three at once', () => running === 3);
    expect(poller.settings).toEqual({
      batchSize: 1,
      batchingWindowSeconds: 0,
      maxConcurrency: 3,
      reportBatchItemFailures: true,
      filters: [],
    });

    // Down to one slot with larger batches: the three running finish, and only the first slot
    // receives again (the others retire as their batch ends).
    poller.configure({ maxConcurrency: 1, batchSize: 3 });
    slots.length = 0;
    sizes.length = 0;
    held = false;
    await until('the queue to empty', () => sizes.reduce((a, b) => a + b, 0) === 3);
    await until('the last invocation to end', () => running === 0);
    expect(new Set(slots)).toEqual(new Set([0]));
    expect(sizes.every((n) => n <= 3)).toBe(true);
  });
});
