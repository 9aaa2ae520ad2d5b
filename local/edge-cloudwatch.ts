/**
 * The edge's CloudWatch (one per edge, as an account's): its metrics and alarms, and SQS's
 * metrics, a queue's depths and the age of its oldest message, sampled when a metric of it is
 * read (CloudWatch samples each queue every minute).
 */

import type { SNSClient } from '@aws-sdk/client-sns';
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueDoesNotExist,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { snsActions } from './alarm-actions.ts';
import { AlarmBook } from './alarm-book.ts';
import { evaluated } from './cloudwatch-api.ts';
import type { CloudWatchBackend } from './cloudwatch-operation.ts';
import type { FauxqsStores } from './fauxqs-store.ts';
import { type MetricId, MetricStore } from './metrics.ts';

/** Each sampled metric and the queue attribute it reads. */
const SAMPLED = {
  ApproximateNumberOfMessagesVisible: 'ApproximateNumberOfMessages',
  ApproximateNumberOfMessagesNotVisible: 'ApproximateNumberOfMessagesNotVisible',
  ApproximateNumberOfMessagesDelayed: 'ApproximateNumberOfMessagesDelayed',
} as const;

const AGE = 'ApproximateAgeOfOldestMessage';
const isSampled = (name: string) => name in SAMPLED || name === AGE;

/** What the emulator says of its queues beyond their attributes. */
export interface QueueProbe {
  /** Brings the emulator's counts up to date (visibility timeouts that ended). */
  refresh(): void;
  /** The age of the queue's oldest message, in ms; undefined when it cannot tell. */
  oldestMessageAgeMs?(queueName: string, nowMs: number): number | undefined;
}

/**
 * Samples the depths of every queue one of `metrics` names (namespace `AWS/SQS`, dimension
 * `QueueName`) into `store`, at `nowMs`. A queue that does not exist gives no data.
 */
export const sampleQueues = async (
  sqs: SQSClient,
  store: MetricStore,
  metrics: readonly MetricId[],
  nowMs: number,
  probe?: QueueProbe,
): Promise<void> => {
  const queues = new Set(
    metrics.flatMap((m) =>
      m.namespace === 'AWS/SQS' && isSampled(m.name) && m.dimensions.QueueName !== undefined
        ? [m.dimensions.QueueName]
        : [],
    ),
  );
  await Promise.all(
    [...queues].map(async (queueName) => {
      try {
        const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: queueName }));
        const { Attributes = {} } = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl,
            AttributeNames: Object.values(SAMPLED),
          }),
        );
        const put = (name: string, value: number, unit: string) =>
          store.put({
            namespace: 'AWS/SQS',
            name,
            dimensions: { QueueName: queueName },
            timestampMs: nowMs,
            value,
            unit,
          });
        for (const [name, attribute] of Object.entries(SAMPLED))
          put(name, Number(Attributes[attribute] ?? 0), 'Count');
        const ageMs = probe?.oldestMessageAgeMs?.(queueName, nowMs);
        if (ageMs !== undefined) put(AGE, Math.floor(ageMs / 1000), 'Seconds');
      } catch (error) {
        if (!(error instanceof QueueDoesNotExist)) throw error;
      }
    }),
  );
};

/** How often the edge evaluates its alarms unasked (CloudWatch: every minute). */
const EVALUATION_EVERY_MS = 10_000;

/**
 * The edge's CloudWatch, sampling queues through `sqs` (the emulator's own address) and its stores,
 * its alarms' notifications published through `sns`. Its alarms are evaluated when
 * read and every 10 s besides, so that their history dates each change within seconds of the
 * datapoint that made it, as CloudWatch's minutely evaluation does within a minute. `stop` ends
 * that; an evaluation that fails is told to `warn`.
 */
export const edgeCloudWatch = (
  where: { readonly region: string; readonly account: string },
  { sqs, sns }: { readonly sqs: SQSClient; readonly sns: SNSClient },
  /** fauxqs's stores, when the edge made them: without them, no queue's age is known. */
  stores: FauxqsStores | undefined,
  warn: (message: string) => void = () => {},
): CloudWatchBackend & { stop(): void } => {
  const probe: QueueProbe = {
    refresh: () => stores?.expireVisibility(),
    oldestMessageAgeMs: (name, nowMs) => stores?.oldestMessageAgeMs(name, nowMs),
  };
  const metrics = new MetricStore();
  const backend: CloudWatchBackend = {
    metrics,
    alarms: new AlarmBook(where, snsActions(sns, where)),
    sample: (wanted, nowMs) => {
      probe.refresh();
      return sampleQueues(sqs, metrics, wanted, nowMs, probe);
    },
  };
  const timer = setInterval(() => {
    evaluated(backend, Date.now()).catch((error: unknown) =>
      warn(
        `the alarms were not evaluated: ${error instanceof Error ? error.message : String(error)}`,
      ),
    );
  }, EVALUATION_EVERY_MS);
  timer.unref();
  return { ...backend, stop: () => clearInterval(timer) };
};
