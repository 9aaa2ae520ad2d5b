import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import type { QueueWithDlq } from './queue-with-dlq.ts';

export interface PipelineAlarmsProps {
  readonly queues: Record<string, QueueWithDlq>;
  readonly functions: Record<string, IFunction>;
  /** Subscribed to an SNS topic that receives every alarm; no topic when absent. */
  readonly email?: string;
  /** Alarm when the oldest message is older than this. Default 5 minutes. */
  readonly maxMessageAge?: Duration;
  /**
   * Alarm when a batch stays in progress (claimed, not committed) longer than this, from the
   * `OldestPendingBatchAge` metric of the pending watcher. Default 15 minutes: three runs of the
   * watcher, well past any retry of a healthy message.
   */
  readonly maxPendingAge?: Duration;
  /** What happens to the topic's key when the stack goes. Default RETAIN. */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Where the functions' own metrics land (Powertools' namespace and `service` dimension): the
   * alarms on quarantined input and conflicts read them. No such alarms when absent.
   */
  readonly appMetrics?: AppMetrics;
}

/** The namespace and `service` dimension of the functions' Powertools metrics. */
export interface AppMetrics {
  readonly namespace: string;
  readonly service: string;
}

/** One of the functions' own metrics, summed per period. */
export const appMetric = (m: AppMetrics, name: string, period: Duration, statistic = 'Sum') =>
  new Metric({
    namespace: m.namespace,
    metricName: name,
    dimensionsMap: { service: m.service },
    statistic,
    period,
  });

/**
 * Producer alarms: each means a producer is broken, and none heals by retrying, so one occurrence
 * is worth waking someone (the reason is in each alarm's description).
 */
const PRODUCER_ALARMS: [metric: string, reason: string][] = [
  [
    'RejectedMessages',
    'a body was quarantined (invalid JSON, schema, size, retention): a producer sends what the contract refuses. `onceflow rejects` shows the reason; nothing of it was applied.',
  ],
  [
    'BatchConflicts',
    'a batch id was reused with other content: a producer reuses ids. The second content was not applied; `onceflow rejects --reason batch-conflict`.',
  ],
  [
    'LateAfterFinal',
    "an event arrived after its hour was final (later than allowedLatenessMinutes): it was applied and the hour republished with its amendments count raised. Producers deliver later than the lateness allows, or the lateness is too short for them; the hour object's amendments and amendedAt, and its day's index under aggregates/hourly/_final/, say which hours changed.",
  ],
  [
    'TooLateEvents',
    "events arrived for an hour already closed or final (latePolicy quarantine): they were refused, the rest of their batches applied. Producers deliver later than allowedLatenessMinutes allows; `onceflow rejects --reason too-late` lists each batch's refused part.",
  ],
  [
    'EventConflicts',
    'an event was re-sent with other content: a producer changes events under their id. The first content stands; `onceflow rejects --reason event-conflict --json` shows both.',
  ],
];

/**
 * Messages in a DLQ, a growing backlog, function errors and throttles, and the producer alarms:
 * quarantined input, batch conflicts, event conflicts.
 */
export class PipelineAlarms extends Construct {
  readonly alarms: Alarm[] = [];
  readonly topic: Topic | undefined;

  constructor(scope: Construct, id: string, props: PipelineAlarmsProps) {
    super(scope, id);
    const period = Duration.minutes(1);
    const add = (
      name: string,
      alarm: Omit<ConstructorParameters<typeof Alarm>[2], 'evaluationPeriods'>,
    ) =>
      this.alarms.push(
        new Alarm(this, name, {
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
          ...alarm,
        }),
      );
    for (const [name, q] of Object.entries(props.queues)) {
      add(`${name}DlqMessages`, {
        alarmDescription: `${name}: messages in the DLQ. Inspect, fix, then \`onceflow replay dlq --queue ${name}\`.`,
        metric: q.dlq.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
      add(`${name}OldestMessage`, {
        alarmDescription: `${name}: the oldest message waits too long (backlog or stuck consumer).`,
        metric: q.queue.metricApproximateAgeOfOldestMessage({ period, statistic: 'Maximum' }),
        threshold: (props.maxMessageAge ?? Duration.minutes(5)).toSeconds(),
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
    for (const [name, fn] of Object.entries(props.functions)) {
      add(`${name}Errors`, {
        alarmDescription: `${name}: invocations failed as a whole.`,
        metric: fn.metricErrors({ period, statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
      add(`${name}Throttles`, {
        alarmDescription: `${name}: invocations were throttled.`,
        metric: fn.metricThrottles({ period, statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
    if (props.appMetrics) {
      for (const [metric, reason] of PRODUCER_ALARMS) {
        add(metric, {
          alarmDescription: `${metric}: ${reason}`,
          metric: appMetric(props.appMetrics, metric, Duration.minutes(5)),
          threshold: 1,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        });
      }
      add('OldestPendingBatchAge', {
        alarmDescription:
          'OldestPendingBatchAge: a batch was claimed but not committed for too long; its message is retrying or in a DLQ, and its hours lack it. `onceflow status` names the oldest; see the DLQ runbook.',
        metric: appMetric(
          props.appMetrics,
          'OldestPendingBatchAge',
          Duration.minutes(5),
          'Maximum',
        ),
        threshold: (props.maxPendingAge ?? Duration.minutes(15)).toSeconds(),
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
    if (props.email) {
      // Encrypted at rest with a key of the stack's own: the AWS-managed SNS key's policy does not
      // let CloudWatch publish, so alarms would fail to notify silently.
      const key = new Key(this, 'TopicKey', {
        description: 'onceflow alarm topic',
        enableKeyRotation: true,
        removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
      });
      key.addToResourcePolicy(
        new PolicyStatement({
          sid: 'CloudWatchAlarmsPublish',
          principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
          actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          // In a key policy, `*` is this key.
          resources: ['*'],
        }),
      );
      this.topic = new Topic(this, 'Topic', { enforceSSL: true, masterKey: key });
      this.topic.addSubscription(new EmailSubscription(props.email));
      for (const alarm of this.alarms) alarm.addAlarmAction(new SnsAction(this.topic));
    }
  }
}
