/** `onceflow status`: queue depths, ledger totals, duplicates, rejects, triggers and alarms. */
import { CloudWatchClient, GetMetricStatisticsCommand } from '@aws-sdk/client-cloudwatch';
import { QueueDoesNotExist } from '@aws-sdk/client-sqs';
import Table from 'cli-table3';
import type { Command } from 'commander';
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { queueDepth } from '../../adapters/sqs.ts';
import { counted, terminalSafe } from '../../local/render.ts';
import { json, run, target } from '../program.ts';
import type { Target } from '../target.ts';
import { type AlarmStatus, stackAlarms } from './alarms.ts';
import { countRejects } from './rejects.ts';
import { type TriggerReport, type TriggerStates, triggerReport } from './trigger.ts';

/** A queue's depth, or `missing` when it does not exist (deleted by hand: `onceflow check`). */
export type QueueStatus =
  | {
      readonly name: string;
      readonly visible: number;
      readonly inFlight: number;
      readonly delayed: number;
    }
  | { readonly name: string; readonly missing: true };

export interface Status {
  readonly queues: QueueStatus[];
  /**
   * Applied totals from the totals items, pending batches from the sparse pending index: neither
   * scans the ledger. `oldestPending` names the batch in progress the longest.
   */
  readonly ledger: {
    applied: number;
    appliedEvents: number;
    pending: number;
    oldestPending?: { batchId: string; receivedAt: string; ageSeconds: number };
  };
  readonly rejects: Record<string, number>;
  /** Redelivered batches recognised by the ledger (from the DuplicateBatches metric), if known. */
  readonly duplicates: number | undefined;
  /** Why `duplicates` is unknown, when reading it from CloudWatch failed. */
  readonly duplicatesUnavailable?: string;
  /** Each queue-fed function's trigger (`Enabled`, or `Disabled` after `onceflow pause`), if known. */
  readonly triggers?: TriggerStates;
  /**
   * When each queue trigger last changed, ISO 8601: its mappings' LastModified (for a paused one,
   * when it settled in Disabled). EventBridge keeps no such time for the finalizer's schedule.
   */
  readonly triggersChangedAt?: TriggerReport['changedAt'];
  /** Why `triggers` is unknown, when Lambda's API could not be read. */
  readonly triggersUnavailable?: string;
  /** The stack's alarms: each one's state and whether its actions are on, or that it is gone. */
  readonly alarms?: AlarmStatus[];
  /** Why `alarms` is unknown, when CloudFormation or CloudWatch could not be read. */
  readonly alarmsUnavailable?: string;
}

/** A figure read from metrics: its value, or why it could not be read. */
type MetricFigure = { readonly value: number } | { readonly unavailable: string };

const metricFromCloudWatch = async (target: Target, metric: string): Promise<MetricFigure> => {
  const cw = new CloudWatchClient(target.clientConfig ?? { region: target.region });
  try {
    const out = await cw.send(
      new GetMetricStatisticsCommand({
        Namespace: 'onceflow',
        MetricName: metric,
        // The stack's own (its name); a stack deployed before that output existed used `onceflow`.
        Dimensions: [{ Name: 'service', Value: target.outputs.MetricsService ?? 'onceflow' }],
        StartTime: new Date(Date.now() - 14 * 86_400_000),
        EndTime: new Date(),
        Period: 14 * 86_400,
        Statistics: ['Sum'],
      }),
    );
    return { value: (out.Datapoints ?? []).reduce((s, d) => s + (d.Sum ?? 0), 0) };
  } catch (error) {
    // The figure is a courtesy beside the depths and the ledger, which were read: an endpoint
    // without CloudWatch metrics, a role without cloudwatch:GetMetricStatistics or a subnet
    // without a route to it leaves it unknown, and the output says why.
    if (!(error instanceof Error)) throw error;
    return { unavailable: `${error.name}: ${error.message}` };
  } finally {
    cw.destroy();
  }
};

export const status = async (target: Target): Promise<Status> => {
  const queueOutputs: [string, string][] = [
    ['orders', 'OrdersQueueUrl'],
    ['orders DLQ', 'OrdersDlqUrl'],
    ['aggregate', 'AggregateQueueUrl'],
    ['aggregate DLQ', 'AggregateDlqUrl'],
  ];
  const queues = await Promise.all(
    queueOutputs.map(async ([name, output]): Promise<QueueStatus> => {
      try {
        return { name, ...(await queueDepth(target.clients.sqs, target.output(output))) };
      } catch (error) {
        if (error instanceof QueueDoesNotExist) return { name, missing: true };
        throw error;
      }
    }),
  );
  const store = new DynamoLedger(target.clients.dynamo, target.output('TableName'));
  const [totals, pending] = await Promise.all([store.totals(), store.pendingBatches()]);
  const [oldest] = pending;
  const ledger = {
    applied: totals.batches,
    appliedEvents: totals.events,
    pending: pending.length,
    ...(oldest
      ? {
          oldestPending: {
            batchId: oldest.batchId,
            receivedAt: new Date(oldest.receivedAtMs).toISOString(),
            ageSeconds: Math.max(0, Math.round((Date.now() - oldest.receivedAtMs) / 1000)),
          },
        }
      : {}),
  };
  const rejects = await countRejects(target);
  // Reported, not fatal: a role may read the queues and table without Lambda's API.
  const triggers = await triggerReport(target).then(
    (report) => ({ triggers: report.states, triggersChangedAt: report.changedAt }),
    (error: unknown) => ({
      triggersUnavailable: error instanceof Error ? error.message : String(error),
    }),
  );
  // Reported, not fatal, as the triggers: a role may read the pipeline without CloudWatch.
  const [figure, alarms] = await Promise.all([
    metricFromCloudWatch(target, 'DuplicateBatches'),
    stackAlarms(target).then(
      (found) => ({ alarms: found }),
      (error: unknown) => {
        if (!(error instanceof Error)) throw error;
        return { alarmsUnavailable: `${error.name}: ${error.message}` };
      },
    ),
  ]);
  return {
    queues,
    ledger,
    rejects,
    ...('value' in figure
      ? { duplicates: figure.value }
      : { duplicates: undefined, duplicatesUnavailable: figure.unavailable }),
    ...triggers,
    ...alarms,
  };
};

/**
 * `alarms: 18, 1 in ALARM, 1 with actions off`, then a line for each alarm in ALARM (with
 * CloudWatch's reason), with its actions off, or deleted.
 */
const alarmLines = (s: Status): string[] => {
  if (!s.alarms) return [`alarms: unknown (${terminalSafe(s.alarmsUnavailable ?? '')})`];
  const present = s.alarms.flatMap((a) => ('missing' in a ? [] : [a]));
  const missing = s.alarms.filter((a) => 'missing' in a);
  const firing = present.filter((a) => a.state === 'ALARM');
  const silenced = present.filter((a) => !a.actionsEnabled);
  const noData = present.filter((a) => a.state === 'INSUFFICIENT_DATA');
  const counts = [
    `${firing.length} in ALARM`,
    ...(noData.length > 0 ? [`${noData.length} without data`] : []),
    ...(silenced.length > 0 ? [`${silenced.length} with actions off`] : []),
    ...(missing.length > 0 ? [`${missing.length} MISSING`] : []),
  ];
  return [
    `alarms: ${s.alarms.length}, ${counts.join(', ')}`,
    ...firing.map((a) => `  ALARM ${a.id}: ${terminalSafe(a.reason)}`),
    ...(silenced.length > 0
      ? [
          `  actions off: ${silenced.map((a) => a.id).join(', ')} (nobody is told when ${silenced.length === 1 ? 'it fires' : 'they fire'}; \`onceflow check --fix\` turns them on)`,
        ]
      : []),
    ...(missing.length > 0
      ? [
          `  MISSING: ${missing.map((a) => a.id).join(', ')} (deleted: nothing watches ${missing.length === 1 ? 'its' : 'their'} condition; \`onceflow check --fix\` creates ${missing.length === 1 ? 'it' : 'them'} again)`,
        ]
      : []),
  ];
};

/**
 * `triggers: ingest enabled, aggregate PAUSED since 2026-12-05T23:41:07Z (resume with …)`: since
 * when, where AWS keeps the time of the change.
 */
const triggersLine = (s: Status): string => {
  if (!s.triggers) return `triggers: unknown (${terminalSafe(s.triggersUnavailable ?? '')})`;
  // `none`: deleted by hand (a mapping or rule no deploy creates again).
  const paused = Object.entries(s.triggers).filter(
    ([, state]) => !['Enabled', 'none'].includes(state),
  );
  const missing = Object.entries(s.triggers).some(([, state]) => state === 'none');
  const changedAt = new Map(Object.entries(s.triggersChangedAt ?? {}));
  const since = (fn: string) => {
    const at = changedAt.get(fn);
    return at === undefined ? '' : ` since ${at.replace(/\.\d+Z$/, 'Z')}`;
  };
  return `triggers: ${Object.entries(s.triggers)
    .map(([fn, state]) =>
      state === 'Enabled'
        ? `${fn} enabled`
        : state === 'none'
          ? `${fn} MISSING`
          : `${fn} ${state === 'Disabled' ? 'PAUSED' : state}${since(fn)}`,
    )
    .join(
      ', ',
    )}${paused.length > 0 ? ` (resume with ${paused.map(([fn]) => `\`onceflow resume ${fn}\``).join(', ')})` : ''}${missing ? ' (`onceflow check --fix` creates a missing trigger as deployed)' : ''}`;
};

export const register = (program: Command): void => {
  program
    .command('status')
    .description('queue depths, in-flight and DLQ counts, ledger totals')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  npx onceflow status')
    .action(
      run(async (o: { json?: boolean }) => {
        const t = await target();
        const s = await status(t);
        if (o.json) {
          json(s);
          return 0;
        }
        const queues = new Table({
          head: ['queue', 'visible', 'in flight', 'delayed'],
          style: { head: [], border: [], compact: true },
        });
        for (const q of s.queues)
          queues.push(
            'missing' in q
              ? [q.name, 'MISSING', '', '']
              : [q.name, String(q.visible), String(q.inFlight), String(q.delayed)],
          );
        if (s.queues.some((q) => 'missing' in q))
          console.error('a queue is missing: `onceflow check` says what that breaks');
        console.log(
          `${t.stackName} (${t.kind}${t.endpoint ? ` at ${t.endpoint}` : ''})\n${queues.toString()}`,
        );
        const rejected = Object.values(s.rejects).reduce((a, b) => a + b, 0);
        const oldest = s.ledger.oldestPending;
        console.log(
          `ledger: ${counted(s.ledger.applied, 'batch', 'batches')} applied (${counted(s.ledger.appliedEvents, 'event')}), ${s.ledger.pending} pending` +
            `${oldest ? ` (oldest ${terminalSafe(oldest.batchId)}, received ${oldest.receivedAt}, ${oldest.ageSeconds} s ago)` : ''}; duplicates recognised: ${s.duplicates ?? `unknown${s.duplicatesUnavailable ? ` (${terminalSafe(s.duplicatesUnavailable)})` : ''}`}; ` +
            `conflicts: ${s.rejects['batch-conflict'] ?? 0}; rejects: ${rejected}` +
            (rejected
              ? ` (${Object.entries(s.rejects)
                  .map(([r, n]) => `${r} ${n}`)
                  .join(', ')})`
              : ''),
        );
        console.log(triggersLine(s));
        for (const line of alarmLines(s)) console.log(line);
        return 0;
      }),
    );
};
