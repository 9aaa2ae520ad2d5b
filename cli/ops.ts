/** What each CLI command does, as functions of a target (the printing lives in onceflow.ts). */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CloudWatchClient, GetMetricStatisticsCommand } from '@aws-sdk/client-cloudwatch';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { ListMessageMoveTasksCommand, StartMessageMoveTaskCommand } from '@aws-sdk/client-sqs';
import { DynamoCounterReader, DynamoLedger } from '../adapters/dynamo.ts';
import { S3Store } from '../adapters/s3.ts';
import { queueDepth, queueMessageLimit, sendBodies } from '../adapters/sqs.ts';
import type { AggregatorPorts } from '../shared/aggregator.ts';
import { planHour, publishHour } from '../shared/aggregator.ts';
import { RAW_PREFIX, REJECT_PREFIX } from '../shared/keys.ts';
import { hoursBetween, parseEventTime, parseHour } from '../shared/time.ts';
import { CliError, type Target } from './target.ts';

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `2026-10-01`, `2026-10-01T09:00:00Z` or any RFC 3339 time at a whole hour → epoch ms. */
export const parseBoundary = (flag: string, text: string): number => {
  const value = /^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text;
  const instant = parseEventTime(value);
  if (!instant || instant.epochMs % 3_600_000 !== 0) {
    throw new CliError(
      `${flag} ${text}: give a date (2026-10-01) or a whole UTC hour (2026-10-01T09:00:00Z)`,
    );
  }
  return instant.epochMs;
};

export interface Interval {
  readonly fromMs: number;
  readonly toMs: number;
}

export const parseInterval = (
  from: string | undefined,
  to: string | undefined,
  required: boolean,
): Interval | undefined => {
  if (from === undefined && to === undefined && !required) return undefined;
  if (from === undefined || to === undefined) throw new CliError('give both --from and --to');
  const interval = { fromMs: parseBoundary('--from', from), toMs: parseBoundary('--to', to) };
  if (interval.fromMs >= interval.toMs)
    throw new CliError(`--from ${from} must be before --to ${to}`);
  return interval;
};

export const aggregatorPortsFor = (target: Target): AggregatorPorts => ({
  counters: new DynamoCounterReader(target.clients.dynamo, target.output('TableName')),
  objects: new S3Store(target.clients.s3, target.output('BucketName')),
  now: Date.now,
});

// ---------- send

export interface SendOptions {
  /** Messages per second at most; undefined: as fast as possible. */
  readonly rate?: number;
  readonly onProgress?: (sent: number, total: number) => void;
}

/**
 * Sends each line as one message body, packed by size into as few requests as SQS allows. A
 * body the queue can never take is reported (1-based line number and why); the rest still go.
 */
export const sendLines = async (
  target: Target,
  lines: readonly string[],
  options: SendOptions = {},
) => {
  const queueUrl = target.output('OrdersQueueUrl');
  const { sent, refused } = await sendBodies(target.clients.sqs, queueUrl, lines, {
    maxMessageBytes: await queueMessageLimit(target.clients.sqs, queueUrl),
    ...options,
  });
  return { sent, refused: refused.map((r) => ({ line: r.index + 1, reason: r.reason })) };
};

// ---------- rejects

export interface RejectRecord {
  readonly key: string;
  readonly source: string;
  readonly sentAt: string;
  readonly reason: string;
  readonly detail: string;
  readonly messageId: string;
  readonly batchId?: string;
  readonly body: string;
}

export const listRejects = async (target: Target): Promise<RejectRecord[]> => {
  const bucket = target.output('BucketName');
  const keys = await new S3Store(target.clients.s3, bucket).listKeys(REJECT_PREFIX);
  return Promise.all(
    keys.map(async (key) => {
      const out = await target.clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      const record = JSON.parse((await out.Body?.transformToString()) ?? '{}') as Omit<
        RejectRecord,
        'key'
      >;
      return { key, ...record };
    }),
  );
};

// ---------- replay

export type QueueName = 'orders' | 'aggregate';
const QUEUE_OUTPUTS: Record<QueueName, { source: string; dlq: string; dlqUrl: string }> = {
  orders: { source: 'OrdersQueueArn', dlq: 'OrdersDlqArn', dlqUrl: 'OrdersDlqUrl' },
  aggregate: { source: 'AggregateQueueArn', dlq: 'AggregateDlqArn', dlqUrl: 'AggregateDlqUrl' },
};

/** Moves a DLQ's messages back to its queue with a message move task and waits for the end. */
export const replayDlq = async (
  target: Target,
  queue: QueueName,
  onProgress?: (moved: number, total: number) => void,
  timeoutMs = 600_000,
) => {
  const names = QUEUE_OUTPUTS[queue];
  const dlqArn = target.output(names.dlq);
  const depth = await queueDepth(target.clients.sqs, target.output(names.dlqUrl));
  if (depth.visible + depth.inFlight === 0) return { moved: 0, status: 'EMPTY' };
  await target.clients.sqs.send(
    new StartMessageMoveTaskCommand({
      SourceArn: dlqArn,
      DestinationArn: target.output(names.source),
    }),
  );
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [task] =
      (
        await target.clients.sqs.send(
          new ListMessageMoveTasksCommand({ SourceArn: dlqArn, MaxResults: 1 }),
        )
      ).Results ?? [];
    const moved = Number(task?.ApproximateNumberOfMessagesMoved ?? 0);
    onProgress?.(moved, Number(task?.ApproximateNumberOfMessagesToMove ?? moved));
    if (task?.Status === 'COMPLETED') return { moved, status: task.Status };
    if (task?.Status === 'FAILED' || task?.Status === 'CANCELLED') {
      throw new CliError(
        `the move task ended ${task.Status}${task.FailureReason ? `: ${task.FailureReason}` : ''} after moving ${moved}`,
      );
    }
    if (Date.now() > deadline)
      throw new CliError(
        `the move task is still running after ${timeoutMs / 1000} s (moved ${moved})`,
      );
    await delay(250);
  }
};

/** The archived raw batches whose earliest event falls in the interval. */
export const archivedKeys = async (target: Target, interval: Interval): Promise<string[]> => {
  const store = new S3Store(target.clients.s3, target.output('BucketName'));
  const keys: string[] = [];
  for (const hour of hoursBetween(interval.fromMs, interval.toMs)) {
    keys.push(
      ...(await store.listKeys(
        `${RAW_PREFIX}date=${hour.slice(0, 10)}/hour=${hour.slice(11, 13)}/`,
      )),
    );
  }
  return keys;
};

/** Re-sends archived batches. Safe: the ledger recognises every batch already applied. */
export const replayArchive = async (
  target: Target,
  interval: Interval,
  onProgress?: (sent: number, total: number) => void,
) => {
  const bucket = target.output('BucketName');
  const keys = await archivedKeys(target, interval);
  const bodies: string[] = [];
  for (const key of keys) {
    const out = await target.clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    bodies.push((await out.Body?.transformToString()) ?? '');
  }
  const { sent, refused } = await sendLines(target, bodies, onProgress ? { onProgress } : {});
  return {
    batches: sent,
    refused: refused.map((r) => ({ key: keys[r.line - 1] ?? '', reason: r.reason })),
  };
};

// ---------- reconcile and verify

/** Hours that have counter items (all, or those in the interval). */
export const hoursWithCounters = async (target: Target, interval?: Interval): Promise<string[]> => {
  const hours = await new DynamoCounterReader(
    target.clients.dynamo,
    target.output('TableName'),
  ).hours();
  return hours.filter((h) => inInterval(h, interval));
};

const inInterval = (hour: string, interval?: Interval) => {
  if (!interval) return true;
  const ms = parseHour(hour) ?? Number.NaN;
  return ms >= interval.fromMs && ms < interval.toMs;
};

export interface HourPlan {
  readonly hour: string;
  readonly action: 'write' | 'delete' | 'unchanged';
  readonly events: number;
  readonly storedRevision?: number;
  readonly revision: number;
}

/** Recomputes every hour of the interval from DynamoDB; unless dry, rewrites or deletes its object. */
export const reconcile = async (
  target: Target,
  interval: Interval,
  dryRun: boolean,
): Promise<HourPlan[]> => {
  const ports = aggregatorPortsFor(target);
  const plans: HourPlan[] = [];
  for (const hour of hoursBetween(interval.fromMs, interval.toMs)) {
    const { stored, aggregate, action } = await planHour(hour, ports);
    if (!stored && aggregate.events === 0) continue; // nothing there, nothing to do
    if (!dryRun && action !== 'unchanged') await publishHour(hour, ports);
    plans.push({
      hour,
      action,
      events: aggregate.events,
      revision: aggregate.revision,
      ...(stored?.aggregate ? { storedRevision: stored.aggregate.revision } : {}),
    });
  }
  return plans;
};

export interface Difference {
  readonly hour: string;
  readonly problem: 'missing-object' | 'orphan-object' | 'different' | 'unreadable-object';
  readonly detail: string;
}

/** Compares every hour object with the value recomputed from DynamoDB. */
export const verify = async (
  target: Target,
  interval?: Interval,
): Promise<{ checked: number; differences: Difference[] }> => {
  const ports = aggregatorPortsFor(target);
  const store = new S3Store(target.clients.s3, target.output('BucketName'));
  const objectHours = (await store.listAggregates()).map((a) => a.hour);
  const hours = [...new Set([...objectHours, ...(await hoursWithCounters(target, interval))])]
    .filter((h) => inInterval(h, interval))
    .sort();
  const differences: Difference[] = [];
  for (const hour of hours) {
    const { stored, aggregate, action } = await planHour(hour, ports);
    if (action === 'unchanged') continue;
    if (!stored)
      differences.push({
        hour,
        problem: 'missing-object',
        detail: `${aggregate.events} events in DynamoDB, no object in S3`,
      });
    else if (aggregate.events === 0)
      differences.push({
        hour,
        problem: 'orphan-object',
        detail: 'an object for an hour without events',
      });
    else if (!stored.aggregate)
      differences.push({
        hour,
        problem: 'unreadable-object',
        detail: 'the object is not a valid aggregate',
      });
    else {
      differences.push({
        hour,
        problem: 'different',
        detail: `S3 has ${stored.aggregate.events} events (revision ${stored.aggregate.revision}), DynamoDB ${aggregate.events} (revision ${aggregate.revision})`,
      });
    }
  }
  return { checked: hours.length, differences };
};

// ---------- status

export interface QueueStatus {
  readonly name: string;
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
}

export interface Status {
  readonly queues: QueueStatus[];
  readonly ledger: { applied: number; pending: number };
  readonly rejects: Record<string, number>;
  /** Redelivered batches recognised by the ledger (from the DuplicateBatches metric), if known. */
  readonly duplicates: number | undefined;
}

/** Sums a metric from the Powertools EMF lines in the local runtime's function logs. */
const metricFromLogs = (logDir: string, metric: string): number | undefined => {
  if (!existsSync(logDir)) return undefined;
  let sum = 0;
  for (const file of readdirSync(logDir).filter((f) => f.endsWith('.log'))) {
    for (const line of readFileSync(join(logDir, file), 'utf8').split('\n')) {
      if (!line.includes(`"${metric}"`)) continue;
      try {
        // EMF holds one number, or a list when the metric was added several times.
        const value = (JSON.parse(line) as Record<string, unknown>)[metric];
        for (const n of Array.isArray(value) ? value : [value]) if (typeof n === 'number') sum += n;
      } catch {
        // not an EMF line
      }
    }
  }
  return sum;
};

const metricFromCloudWatch = async (
  target: Target,
  metric: string,
): Promise<number | undefined> => {
  try {
    const cw = new CloudWatchClient({
      region: target.region,
      ...(target.endpoint ? { endpoint: target.endpoint } : {}),
    });
    const out = await cw.send(
      new GetMetricStatisticsCommand({
        Namespace: 'onceflow',
        MetricName: metric,
        Dimensions: [{ Name: 'service', Value: 'onceflow' }],
        StartTime: new Date(Date.now() - 14 * 86_400_000),
        EndTime: new Date(),
        Period: 14 * 86_400,
        Statistics: ['Sum'],
      }),
    );
    return (out.Datapoints ?? []).reduce((s, d) => s + (d.Sum ?? 0), 0);
  } catch {
    return undefined;
  }
};

export const status = async (target: Target, logDir?: string): Promise<Status> => {
  const queueOutputs: [string, string][] = [
    ['orders', 'OrdersQueueUrl'],
    ['orders DLQ', 'OrdersDlqUrl'],
    ['aggregate', 'AggregateQueueUrl'],
    ['aggregate DLQ', 'AggregateDlqUrl'],
  ];
  const queues = await Promise.all(
    queueOutputs.map(async ([name, output]) => ({
      name,
      ...(await queueDepth(target.clients.sqs, target.output(output))),
    })),
  );
  const batches = await new DynamoLedger(
    target.clients.dynamo,
    target.output('TableName'),
  ).batches();
  const ledger = { applied: batches.applied.length, pending: batches.pending.length };
  const rejects: Record<string, number> = {};
  for (const r of await listRejects(target)) rejects[r.reason] = (rejects[r.reason] ?? 0) + 1;
  const duplicates =
    target.kind === 'local' && logDir
      ? metricFromLogs(logDir, 'DuplicateBatches')
      : await metricFromCloudWatch(target, 'DuplicateBatches');
  return { queues, ledger, rejects, duplicates };
};
