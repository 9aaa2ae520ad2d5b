/**
 * An alarm's actions on the local edge: an SNS topic's ARN gets CloudWatch's notification,
 * published to the topic in fauxqs (so an SQS subscriber receives what it would on AWS); any
 * other action (Auto Scaling, EC2, Systems Manager) is not run, and the alarm's history says so.
 */
import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import type { ActionRunner, AlarmChange } from './alarm-book.ts';
import { cloudWatchTime } from './alarm-reasons.ts';

/** The region's name as CloudWatch writes it in a notification. */
const REGION_NAMES: Readonly<Record<string, string>> = {
  'us-east-1': 'US East (N. Virginia)',
  'us-east-2': 'US East (Ohio)',
  'us-west-2': 'US West (Oregon)',
  'eu-west-1': 'EU (Ireland)',
  'eu-central-1': 'EU (Frankfurt)',
};

/** The notification CloudWatch sends an SNS topic when an alarm changes state: subject and body. */
export const alarmNotification = (
  { record, from }: AlarmChange,
  where: { readonly region: string; readonly account: string },
): { subject: string; message: string } => {
  const a = record.alarm;
  const region = REGION_NAMES[where.region] ?? where.region;
  // SNS takes a subject of at most 100 characters.
  const subject = `${record.state}: "${a.AlarmName}" in ${region}`.slice(0, 100);
  const message = {
    AlarmName: a.AlarmName,
    AlarmDescription: a.AlarmDescription ?? null,
    AWSAccountId: where.account,
    AlarmConfigurationUpdatedTimestamp: cloudWatchTime(record.configurationUpdatedMs),
    NewStateValue: record.state,
    NewStateReason: record.reason,
    StateChangeTime: cloudWatchTime(record.transitionedMs),
    Region: region,
    AlarmArn: record.arn,
    OldStateValue: from,
    OKActions: a.OKActions,
    AlarmActions: a.AlarmActions,
    InsufficientDataActions: a.InsufficientDataActions,
    Trigger: {
      MetricName: a.MetricName,
      Namespace: a.Namespace,
      StatisticType: 'Statistic',
      Statistic: a.Statistic.toUpperCase(),
      Unit: a.Unit ?? null,
      Dimensions: a.Dimensions.map((d) => ({ value: d.Value, name: d.Name })),
      Period: a.Period,
      EvaluationPeriods: a.EvaluationPeriods,
      ...(a.DatapointsToAlarm === undefined ? {} : { DatapointsToAlarm: a.DatapointsToAlarm }),
      ComparisonOperator: a.ComparisonOperator,
      Threshold: a.Threshold,
      TreatMissingData: a.TreatMissingData,
      EvaluateLowSampleCountPercentile: '',
    },
  };
  return { subject, message: JSON.stringify(message) };
};

/** Publishes each SNS action's notification through `sns`, noting each outcome as CloudWatch does. */
export const snsActions =
  (sns: SNSClient, where: { readonly region: string; readonly account: string }): ActionRunner =>
  (change, note) => {
    const { subject, message } = alarmNotification(change, where);
    for (const action of change.actions) {
      if (!action.startsWith('arn:aws:sns:')) {
        note(`Action not run locally: ${action} (only SNS topics are)`);
        continue;
      }
      sns.send(new PublishCommand({ TopicArn: action, Subject: subject, Message: message })).then(
        () => note(`Successfully executed action ${action}`),
        (error: unknown) =>
          note(
            `Failed to execute action ${action}. Received error: "${error instanceof Error ? error.message : String(error)}"`,
          ),
      );
    }
  };
