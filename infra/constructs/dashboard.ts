import { Duration } from 'aws-cdk-lib';
import {
  Dashboard,
  GraphWidget,
  type IMetric,
  Metric,
  TextWidget,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { type AppMetrics, appMetric } from './alarms.ts';
import type { QueueWithDlq } from './queue-with-dlq.ts';

export interface PipelineDashboardProps {
  readonly queues: Record<string, QueueWithDlq>;
  readonly functions: Record<string, IFunction>;
  /** The table whose consumed capacity and throttles are shown. */
  readonly tableName: string;
  readonly appMetrics: AppMetrics;
  /** Default `onceflow-<stack name>`. */
  readonly dashboardName?: string;
}

const MINUTE = Duration.minutes(1);

/**
 * One page for the operator: queues and DLQs, what the ingest did per minute (applied,
 * duplicate, stale, quarantined, conflicts), hours written, the functions' durations and errors,
 * and the table's consumed capacity and throttles.
 */
export class PipelineDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: PipelineDashboardProps) {
    super(scope, id);
    const app = (name: string) => appMetric(props.appMetrics, name, MINUTE);
    const table = (metricName: string, statistic = 'Sum') =>
      new Metric({
        namespace: 'AWS/DynamoDB',
        metricName,
        dimensionsMap: { TableName: props.tableName },
        statistic,
        period: MINUTE,
      });
    const graph = (title: string, left: IMetric[], right: IMetric[] = []) =>
      new GraphWidget({ title, left, right, width: 12, height: 6 });
    const queues = Object.entries(props.queues);
    const functions = Object.values(props.functions);

    this.dashboard = new Dashboard(this, 'Dashboard', {
      ...(props.dashboardName ? { dashboardName: props.dashboardName } : {}),
      defaultInterval: Duration.hours(3),
    });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown:
          '## onceflow\nRunbook: the README\'s "Operator CLI and runbook". DLQ messages: `onceflow replay dlq`; quarantine: `onceflow rejects`.',
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      graph(
        'Queue depth (visible messages)',
        queues.map(([, q]) =>
          q.queue.metricApproximateNumberOfMessagesVisible({
            period: MINUTE,
            statistic: 'Maximum',
          }),
        ),
      ),
      graph(
        'Age of the oldest message (s)',
        queues.map(([, q]) =>
          q.queue.metricApproximateAgeOfOldestMessage({ period: MINUTE, statistic: 'Maximum' }),
        ),
      ),
      graph(
        'DLQ messages',
        queues.map(([, q]) =>
          q.dlq.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: 'Maximum' }),
        ),
      ),
      graph(
        'Batches per minute',
        ['BatchesApplied', 'DuplicateBatches', 'RejectedMessages', 'BatchConflicts'].map(app),
        // Contention: commits retried after transaction conflicts, on the right axis.
        [app('CommitConflictRetries')],
      ),
      graph(
        'Events per minute',
        [
          'EventsApplied',
          'EventsAlreadyApplied',
          'StaleEvents',
          'EventConflicts',
          'TooLateEvents',
        ].map(app),
      ),
      graph('Hours per minute', ['HoursWritten', 'HoursUnchanged'].map(app), [
        app('FailedRecords'),
      ]),
      graph(
        'Function duration (p50, p99 ms)',
        functions.flatMap((fn) => [
          fn.metricDuration({ period: MINUTE, statistic: 'p50' }),
          fn.metricDuration({ period: MINUTE, statistic: 'p99' }),
        ]),
      ),
      graph(
        'Function errors and throttles',
        functions.flatMap((fn) => [
          fn.metricErrors({ period: MINUTE }),
          fn.metricThrottles({ period: MINUTE }),
        ]),
      ),
      graph(
        'Table capacity (units per minute)',
        [table('ConsumedWriteCapacityUnits'), table('ConsumedReadCapacityUnits')],
        [table('ThrottledRequests'), table('WriteThrottleEvents'), table('ReadThrottleEvents')],
      ),
    );
  }
}
