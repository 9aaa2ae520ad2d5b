/**
 * Freshness through the local runtime as `npm start` runs it (the real pollers, the bundled code
 * of the cloud assembly): a steady stream of batches at a stated rate, and for each event the
 * time from its SendMessage to the first hour object that includes it.
 *
 * Which batches an hour object includes is read from the object itself: batch k of an hour
 * carries one event of amount 2^k minor units (USD, status `placed`) and the rest of amount 0,
 * so that hour's `placed` USD total, in binary, names exactly the batches it holds. The hour
 * objects are polled every `pollMs`: a time is late by at most that much.
 *
 * A warm-up stream at the same rate, into hours of the day before that nobody observes, runs
 * first, and the measured stream starts once the runtime has drained it: the measured events meet
 * warm environments and a compiled DynamoDB Local, not a runtime's first seconds (cold starts and
 * a JVM still interpreting, which on two cores back the queue up for tens of seconds).
 */
import { GetObjectCommand, NoSuchKey } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import type { Emulators } from '../../local/emulators.ts';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { HourAggregateSchema } from '../../shared/aggregate.ts';
import { hourObjectKey } from '../../shared/keys.ts';
import { unique } from './deliver.ts';

const START = Date.parse('2026-10-01T00:00:00Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Batches per hour: 2^40 minor units (11 dollar digits) stays within the 15 allowed. */
const BATCHES_PER_HOUR = 40;

/** How often the orders queue's depth is read while the stream runs. */
const DEPTH_EVERY_MS = 500;

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hourAt = (h: number) => new Date(START + h * HOUR).toISOString().replace('.000Z', 'Z');
const dollars = (minor: bigint) => `${minor / 100n}.${String(minor % 100n).padStart(2, '0')}`;
const minorOf = (amount: string) => {
  const [whole = '0', fraction = ''] = amount.split('.');
  return BigInt(whole) * 100n + BigInt(fraction.padEnd(2, '0').slice(0, 2) || '0');
};

const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;

export interface FreshnessRun {
  readonly rateEventsPerSec: number;
  readonly seconds: number;
  readonly events: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  /** The warm-up stream's length, before the measured one (seconds). */
  readonly warmupSeconds: number;
  /**
   * Messages of the orders queue not yet done when the stream ended: waiting, or in flight (an
   * invocation that falls behind holds its messages in flight, out of the waiting count).
   */
  readonly backlogAtEnd: number;
  /**
   * How much the orders queue grew over the stream: the mean of its depth (messages waiting or
   * in flight, read every `depthEveryMs`) over the last third of the stream less that over the
   * first third. A queue that keeps up stays level; one that falls behind grows all along.
   */
  readonly backlogGrowth: number;
  /** The orders queue's mean depth (waiting and in flight) over the stream's first third. */
  readonly backlogAtStart: number;
  /** The deepest the orders queue was (waiting and in flight) while the measured stream ran. */
  readonly backlogMax: number;
  /** S3 PUTs of hour objects, per hour object, per minute of the stream. */
  readonly putsPerHourObjectPerMinute: number;
  /**
   * The most PUTs of one hour object within one window (`perWindowSeconds`, aligned to the
   * clock): at most 1 when notifications coalesce.
   */
  readonly maxPutsPerHourObjectPerWindow: number;
  /** PUTs of an hour object per window, on average over the hour objects and the stream. */
  readonly putsPerHourObjectPerWindow: number;
  readonly perWindowSeconds: number;
  /** The coalescing window of hour notifications, from the template (0: none). */
  readonly coalesceWindowSeconds: number;
  /**
   * Messages a function failed during the run, by function (each waits out its queue's
   * visibility timeout before it is retried: a stall of that hour's freshness).
   */
  readonly failedMessages: Readonly<Record<string, number>>;
}

/** One run: `rate` events a second in batches of `batchSize`, for `seconds`. */
export const measureFreshness = async (options: {
  readonly emulators: Emulators;
  readonly assemblyDir: string;
  readonly rate: number;
  readonly seconds: number;
  readonly batchSize?: number;
  readonly pollMs?: number;
  /** The window PUTs are counted in; default the stack's coalescing window, else 2 s. */
  readonly perWindowSeconds?: number;
  /** Where the functions' logs go (one file per function); default nowhere. */
  readonly logDir?: string;
  /** The unmeasured warm-up stream before the measured one (seconds). Default 0: none. */
  readonly warmupSeconds?: number;
}): Promise<FreshnessRun> => {
  const batchSize = options.batchSize ?? 50;
  const warmupSeconds = options.warmupSeconds ?? 0;
  const warmupBatches = Math.round((options.rate * warmupSeconds) / batchSize);
  const pollMs = options.pollMs ?? 50;
  const batches = Math.max(1, Math.round((options.rate * options.seconds) / batchSize));
  const hours = Math.ceil(batches / BATCHES_PER_HOUR);
  const observed = new Set(Array.from({ length: hours }, (_, h) => hourObjectKey(hourAt(h))));
  const puts = new Map<string, number[]>();
  const failedMessages: Record<string, number> = {};
  const runtime: LocalRuntime = await startLocalRuntime({
    assemblyDir: options.assemblyDir,
    emulators: options.emulators,
    localStackName: unique('fresh'),
    ...(options.logDir ? { logDir: options.logDir } : {}),
    onBatch: (fn, report) => {
      const failed = report.error ? report.messageIds.length : report.failedIds.length;
      const name = fn.logicalId.replace(/[0-9A-F]{8}$/, '');
      if (failed > 0) failedMessages[name] = (failedMessages[name] ?? 0) + failed;
    },
    onCall: (call) => {
      if (
        call.service === 's3' &&
        call.action === 'PutObject' &&
        call.key?.startsWith('aggregates/')
      )
        puts.set(call.key, [...(puts.get(call.key) ?? []), Date.now()]);
    },
  });
  try {
    const { sqs, s3 } = runtime.clients;
    const queueUrl = runtime.stack.outputs.OrdersQueueUrl ?? '';
    const bucket = runtime.stack.outputs.BucketName ?? '';
    const coalesceWindowSeconds = Number(
      runtime.stack.functions.find((f) => f.environment.HOUR_COALESCE_SECONDS !== undefined)
        ?.environment.HOUR_COALESCE_SECONDS ?? 0,
    );
    const perWindowSeconds = options.perWindowSeconds ?? (coalesceWindowSeconds || 2);
    const sentAt: number[] = [];
    const seenAt: (number | undefined)[] = [];
    let sending = true;
    let giveUp = false;

    // The observer: every hour object, every pollMs, until every batch is seen.
    const observe = (async () => {
      while (!giveUp && (sending || seenAt.filter((t) => t !== undefined).length < batches)) {
        for (let h = 0; h < hours; h++) {
          let text: string | undefined;
          try {
            const got = await s3.send(
              new GetObjectCommand({ Bucket: bucket, Key: hourObjectKey(hourAt(h)) }),
            );
            text = await got.Body?.transformToString();
          } catch (error) {
            if (!(error instanceof NoSuchKey)) throw error;
          }
          if (!text) continue;
          const hour = v.parse(HourAggregateSchema, JSON.parse(text));
          const total = minorOf(hour.byStatus.placed?.amounts.USD ?? '0');
          const now = performance.now();
          for (let k = 0; k < BATCHES_PER_HOUR; k++) {
            const i = k * hours + h;
            if (i < batches && seenAt[i] === undefined && (total >> BigInt(k)) & 1n)
              seenAt[i] = now;
          }
        }
        await delay(pollMs);
      }
    })();

    // The orders queue's depth through the stream: messages waiting and in flight, so that a
    // backlog held in slow invocations counts as one.
    const depths: { at: number; waiting: number }[] = [];
    const waiting = async () => {
      const { Attributes: a } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      return (
        Number(a?.ApproximateNumberOfMessages ?? 0) +
        Number(a?.ApproximateNumberOfMessagesNotVisible ?? 0)
      );
    };
    const sample = (async () => {
      while (sending) {
        depths.push({ at: performance.now(), waiting: await waiting() });
        await delay(DEPTH_EVERY_MS);
      }
    })();

    // The producer: one SendMessage per batch, on schedule. The warm-up's batches (i < 0) go
    // to the day before, whose hours nobody observes.
    const send = async (i: number) => {
      const h = Math.abs(i) % hours;
      const k = i < 0 ? 0 : Math.floor(i / hours);
      const batchId = unique(`fresh-${i}`);
      const events = Array.from({ length: batchSize }, (_, e) => ({
        eventId: `${batchId}-${e}`,
        orderId: `${batchId}-o${e}`,
        customerId: 'c-fresh',
        status: 'placed',
        amount: e === 0 ? dollars(1n << BigInt(k)) : '0',
        currency: 'USD',
        eventTime: new Date(START - (i < 0 ? DAY : 0) + h * HOUR + (e % 3600) * 1000)
          .toISOString()
          .replace('.000Z', 'Z'),
      }));
      if (i >= 0) sentAt[i] = performance.now();
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify({ batchId, events }),
        }),
      );
    };
    const stream = async (from: number, to: number) => {
      const at = performance.now();
      for (let i = from; i < to; i++) {
        const ahead = at + ((i - from) * batchSize * 1000) / options.rate - performance.now();
        if (ahead > 0) await delay(ahead);
        await send(i);
      }
      return at;
    };
    if (warmupBatches > 0) {
      await stream(-warmupBatches, 0);
      // What the warm-up's first seconds left behind is not the measured stream's to wait on.
      await runtime.drain({ timeoutMs: 600_000 });
    }
    const started = await stream(0, batches);
    const ended = performance.now();
    const streamSeconds = (ended - started) / 1000;
    const backlogAtEnd = await waiting();
    sending = false;
    await sample;
    const meanDepth = (from: number, to: number) => {
      const within = depths.filter((d) => d.at >= from && d.at < to).map((d) => d.waiting);
      return within.reduce((a, b) => a + b, 0) / Math.max(1, within.length);
    };
    const third = (ended - started) / 3;
    const backlogAtStart = meanDepth(started, started + third);
    const backlogGrowth = meanDepth(ended - third, ended) - backlogAtStart;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      observe,
      new Promise((_, reject) => {
        timer = setTimeout(
          () =>
            reject(new Error('freshness: an hour object never included every batch (10 minutes)')),
          600_000,
        );
      }),
    ]).finally(() => {
      clearTimeout(timer);
      giveUp = true;
    });
    const latencies = sentAt.map((t, i) => (seenAt[i] ?? t) - t).sort((a, b) => a - b);
    // The measured hours' objects only (not the warm-up's).
    const measured = [...puts].filter(([key]) => observed.has(key)).map(([, times]) => times);
    const putsPerObject = measured.reduce((a, b) => a + b.length, 0) / Math.max(1, measured.length);
    let maxPerWindow = 0;
    for (const times of measured) {
      const perWindow = new Map<number, number>();
      for (const t of times) {
        const w = Math.floor(t / (perWindowSeconds * 1000));
        perWindow.set(w, (perWindow.get(w) ?? 0) + 1);
      }
      maxPerWindow = Math.max(maxPerWindow, ...perWindow.values());
    }
    return {
      rateEventsPerSec: options.rate,
      seconds: Number(streamSeconds.toFixed(1)),
      warmupSeconds,
      events: batches * batchSize,
      p50Ms: Math.round(percentile(latencies, 50)),
      p95Ms: Math.round(percentile(latencies, 95)),
      p99Ms: Math.round(percentile(latencies, 99)),
      backlogAtEnd,
      backlogGrowth: Number(backlogGrowth.toFixed(1)),
      backlogAtStart: Number(backlogAtStart.toFixed(1)),
      backlogMax: Math.max(0, ...depths.filter((d) => d.at >= started).map((d) => d.waiting)),
      putsPerHourObjectPerMinute: Number((putsPerObject / (streamSeconds / 60)).toFixed(1)),
      maxPutsPerHourObjectPerWindow: maxPerWindow,
      putsPerHourObjectPerWindow: Number(
        (putsPerObject / (streamSeconds / perWindowSeconds)).toFixed(2),
      ),
      perWindowSeconds,
      coalesceWindowSeconds,
      failedMessages,
    };
  } finally {
    await runtime.stop();
  }
};
