/**
 * The edge's CloudWatch (one per edge, as an account's): its metrics and alarms, and SQS's
 * metrics, a queue's depths, sampled when a metric of it is read (CloudWatch samples each queue
 * every minute). `ApproximateAgeOfOldestMessage` is not sampled: the emulator keeps no such
 * figure, so it has no data locally.
 */
import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueDoesNotExist,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { AlarmBook } from './alarm-book.ts';
import { type CloudWatchBackend, evaluated } from './cloudwatch-api.ts';
import { type MetricId, MetricStore } from './metrics.ts';

/** Each sampled metric and the queue attribute it reads. */
const SAMPLED = {
  ApproximateNumberOfMessagesVisible: 'ApproximateNumberOfMessages',
  ApproximateNumberOfMessagesNotVisible: 'ApproximateNumberOfMessagesNotVisible',
  ApproximateNumberOfMessagesDelayed: 'ApproximateNumberOfMessagesDelayed',
} as const;

const isSampled = (name: string): name is keyof typeof SAMPLED => name in SAMPLED;

/**
 * Samples the depths of every queue one of `metrics` names (namespace `AWS/SQS`, dimension
 * `QueueName`) into `store`, at `nowMs`. A queue that does not exist gives no data.
 */
export const sampleQueues = async (
  sqs: SQSClient,
  store: MetricStore,
  metrics: readonly MetricId[],
  nowMs: number,
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
        for (const [name, attribute] of Object.entries(SAMPLED)) {
          store.put({
            namespace: 'AWS/SQS',
            name,
            dimensions: { QueueName: queueName },
            timestampMs: nowMs,
            value: Number(Attributes[attribute] ?? 0),
            unit: 'Count',
          });
        }
      } catch (error) {
        if (!(error instanceof QueueDoesNotExist)) throw error;
      }
    }),
  );
};

/** How often the edge evaluates its alarms unasked (CloudWatch: every minute). */
const EVALUATION_EVERY_MS = 10_000;

/**
 * The edge's CloudWatch, sampling queues through `sqs` (the emulator's own address);
 * `beforeSample` brings the emulator's counts up to date first. Its alarms are evaluated when
 * read and every 10 s besides, so that their history dates each change within seconds of the
 * datapoint that made it, as CloudWatch's minutely evaluation does within a minute. `stop` ends
 * that; an evaluation that fails is told to `warn`.
 */
export const edgeCloudWatch = (
  where: { readonly region: string; readonly account: string },
  sqs: SQSClient,
  beforeSample: () => void,
  warn: (message: string) => void = () => {},
): CloudWatchBackend & { stop(): void } => {
  const metrics = new MetricStore();
  const backend: CloudWatchBackend = {
    metrics,
    alarms: new AlarmBook(where),
    sample: (wanted, nowMs) => {
      beforeSample();
      return sampleQueues(sqs, metrics, wanted, nowMs);
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
