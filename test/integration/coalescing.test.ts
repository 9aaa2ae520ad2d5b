import { randomUUID } from 'node:crypto';
import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { SqsHourNotifier, sendBodies } from '../../adapters/sqs.ts';
import { waitFor } from '../../local/net.ts';
import { startLocalRuntime } from '../../local/runtime.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { useEmulators } from '../support/emulators.ts';
import { uniqueName } from '../support/names.ts';
import { createPipeline, stateViews } from '../support/pipeline.ts';

const HOURS = ['2026-10-01T09:00:00Z', '2026-10-01T10:00:00Z'] as const;

/**
 * Messages of the aggregate queue, each deleted once received (a FIFO group stays locked while
 * one of its messages is in flight), until `until` holds of them.
 */
const receiveUntil = async (
  p: Awaited<ReturnType<typeof createPipeline>>,
  until: (bodies: readonly string[]) => boolean,
) => {
  const bodies: { body: string; groupId: string | undefined }[] = [];
  await waitFor(
    async () => {
      const out = await p.admin.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: p.aggregateQueueUrl,
          MaxNumberOfMessages: 10,
          MessageSystemAttributeNames: ['MessageGroupId'],
          VisibilityTimeout: 600,
        }),
      );
      for (const m of out.Messages ?? []) {
        bodies.push({ body: m.Body ?? '', groupId: m.Attributes?.MessageGroupId });
        await p.admin.sqs.send(
          new DeleteMessageCommand({
            QueueUrl: p.aggregateQueueUrl,
            ReceiptHandle: m.ReceiptHandle,
          }),
        );
      }
      return until(bodies.map((b) => b.body));
    },
    { timeoutMs: DEADLINE_MS, what: 'the hour notifications', intervalMs: 200 },
  );
  return bodies;
};

describe('coalescing hour notifications (the default aggregateWindowSeconds: 2)', () => {
  it('keeps one notification per hour and window however many batches notify it', async () => {
    const p = await createPipeline();
    const window = Number(p.env.HOUR_COALESCE_SECONDS);
    expect(window).toBe(2);
    expect(p.aggregateQueueUrl).toMatch(/\.fifo$/);
    // Two windows' worth of notifications on a fixed clock: 25 per hour in each.
    const slotStart = 1_000 * window * 900_000_000;
    let now = slotStart;
    const notifier = new SqsHourNotifier(p.admin.sqs, p.aggregateQueueUrl, {
      coalesceSeconds: window,
      now: () => now,
    });
    for (const offset of [0, window * 1000]) {
      for (let i = 0; i < 25; i++) {
        now = slotStart + offset + i * 10;
        await notifier.notifyHours(HOURS);
      }
    }
    const received = await receiveUntil(p, (bodies) => bodies.length >= 4);
    // Nothing else arrives before a marker sent after them (all are delayed alike): the other
    // 96 were dropped as duplicates of their hour and window.
    const marker = JSON.stringify({ hour: 'end-marker' });
    await p.sendToAggregateQueue(marker);
    const rest = await receiveUntil(p, (bodies) => bodies.includes(marker));
    expect(rest.map((m) => m.body)).toEqual([marker]);
    expect(received.map((m) => [m.groupId, m.body]).sort()).toEqual(
      [...HOURS, ...HOURS].map((hour) => [hour, JSON.stringify({ hour })]).sort(),
    );
  });
});

describe('coalescing through the local runtime', () => {
  const emulators = useEmulators();

  /** A local runtime that counts the PUTs of each hour object and the aggregate trigger's batches. */
  const countingRuntime = async (name: string) => {
    const puts = new Map<string, number>();
    const aggregateBatches: string[][] = [];
    const runtime = await startLocalRuntime({
      assemblyDir: inject('assembly').assemblyDir,
      emulators: emulators(),
      localStackName: uniqueName(name),
      retryDelaySeconds: 1,
      onCall: (call) => {
        if (call.action === 'PutObject' && call.key?.startsWith('aggregates/'))
          puts.set(call.key, (puts.get(call.key) ?? 0) + 1);
      },
      onBatch: (fn, report) => {
        if (fn.logicalId.startsWith('AggregateHours'))
          aggregateBatches.push([...report.messageIds]);
      },
    });
    onTestFinished(() => runtime.stop());
    return { runtime, puts, aggregateBatches };
  };

  it('publishes every batch and rewrites each hour object less often than batches touch it when they come in a burst', async () => {
    const { runtime, puts, aggregateBatches } = await countingRuntime('coalesce');
    const batches = 40;
    const bodies = Array.from({ length: batches }, () => {
      const batchId = `burst-${randomUUID()}`;
      return JSON.stringify({
        batchId,
        events: HOURS.map((hour, h) => ({
          eventId: `${batchId}-${h}`,
          orderId: `${batchId}-o${h}`,
          customerId: 'c-burst',
          status: 'placed',
          amount: '1.00',
          currency: 'USD',
          eventTime: hour.replace(':00:00Z', ':30:00Z'),
        })),
      });
    });
    const { refused } = await sendBodies(
      runtime.clients.sqs,
      runtime.stack.outputs.OrdersQueueUrl ?? '',
      bodies,
    );
    expect(refused).toEqual([]);
    await runtime.drain({ timeoutMs: DEADLINE_MS });

    const { outputs } = runtime.stack;
    const hourly = await stateViews(
      runtime.clients,
      outputs.TableName ?? '',
      outputs.BucketName ?? '',
    ).hourly();
    expect(hourly.map((h) => [h.hour, h.events, h.byStatus.placed?.amounts.USD])).toEqual(
      HOURS.map((hour) => [hour, batches, `${batches}.00`]),
    );
    // 80 notifications (each batch touches both hours) reached the aggregator as fewer messages,
    // at most one per hour and window; no hour was written more often than it was notified.
    const aggregateMessages = new Set(aggregateBatches.flat());
    expect(aggregateMessages.size).toBeLessThan(batches * HOURS.length);
    for (const count of puts.values()) expect(count).toBeLessThanOrEqual(aggregateMessages.size);
  });

  it('publishes an hour once for the notifications of several windows that one receive gives', async () => {
    const { runtime, puts, aggregateBatches } = await countingRuntime('backlog');
    const { outputs } = runtime.stack;
    const aggregatePoller = [...runtime.pollers].find(([id]) =>
      runtime.stack.mappings.some(
        (m) => m.logicalId === id && m.functionLogicalId.startsWith('AggregateHours'),
      ),
    )?.[1];
    if (!aggregatePoller) throw new Error('no aggregate trigger');
    // A backlog, as after the aggregate trigger was disabled: the hour notified in two windows.
    aggregatePoller.pause();
    const window = Number(
      runtime.stack.functions.find((f) => f.logicalId.startsWith('IngestOrders'))?.environment
        .HOUR_COALESCE_SECONDS,
    );
    expect(window).toBeGreaterThan(0);
    const windowOf = (ms: number) => Math.floor(ms / (window * 1000));
    // Past their delay: visible, or held back by the paused trigger's last receive.
    const aggregateDepth = async () => {
      const a =
        (
          await runtime.clients.sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: outputs.AggregateQueueUrl,
              AttributeNames: [
                'ApproximateNumberOfMessages',
                'ApproximateNumberOfMessagesNotVisible',
              ],
            }),
          )
        ).Attributes ?? {};
      return (
        Number(a.ApproximateNumberOfMessages) + Number(a.ApproximateNumberOfMessagesNotVisible)
      );
    };
    const [hour] = HOURS;
    for (const n of [1, 2]) {
      const sentIn = windowOf(Date.now());
      const batchId = `backlog-${n}-${randomUUID()}`;
      const { refused } = await sendBodies(runtime.clients.sqs, outputs.OrdersQueueUrl ?? '', [
        JSON.stringify({
          batchId,
          events: [
            {
              eventId: `${batchId}-e`,
              orderId: `${batchId}-o`,
              customerId: 'c-backlog',
              status: 'placed',
              amount: '1.00',
              currency: 'USD',
              eventTime: hour.replace(':00:00Z', ':30:00Z'),
            },
          ],
        }),
      ]);
      expect(refused).toEqual([]);
      // Each notification past its window's delay before the next window's batch.
      await waitFor(async () => (await aggregateDepth()) === n, {
        timeoutMs: DEADLINE_MS,
        what: `notification ${n} of the hour`,
      });
      await waitFor(async () => windowOf(Date.now()) > sentIn, {
        timeoutMs: DEADLINE_MS,
        what: 'the next coalescing window',
      });
    }
    aggregatePoller.resume();
    await runtime.drain({ timeoutMs: DEADLINE_MS });
    // One receive gave both notifications of the hour (SQS gives a group's messages together),
    // and the aggregator published the hour once for both.
    expect(aggregateBatches.map((ids) => ids.length)).toEqual([2]);
    expect([...puts.values()]).toEqual([1]);
    const hourly = await stateViews(
      runtime.clients,
      outputs.TableName ?? '',
      outputs.BucketName ?? '',
    ).hourly();
    expect(hourly.map((h) => [h.hour, h.events])).toEqual([[hour, 2]]);
  });
});
