/** Reading a local runtime's alarms and onceflow's own metrics through CloudWatch's API. */
import {
  type CloudWatchClient,
  DescribeAlarmsCommand,
  GetMetricStatisticsCommand,
  type MetricAlarm,
} from '@aws-sdk/client-cloudwatch';

export type Statistic = 'Sum' | 'SampleCount' | 'Maximum';

/**
 * `GetMetricStatistics`' input for one of onceflow's metrics over the last hour, in one period.
 * `service` is the stack's name as synthesized (the functions' service dimension).
 */
export const overAnHour = (service: string, metricName: string, statistics: Statistic[]) => ({
  Namespace: 'onceflow',
  MetricName: metricName,
  Dimensions: [{ Name: 'service', Value: service }],
  StartTime: new Date(Date.now() - 3_600_000),
  EndTime: new Date(Date.now() + 60_000),
  Period: 7200,
  Statistics: statistics,
});

/** One statistic of one of onceflow's metrics over the last hour; 0 without data. */
export const statisticOf = async (
  cw: CloudWatchClient,
  service: string,
  metricName: string,
  statistic: Statistic,
): Promise<number> => {
  const [point] =
    (await cw.send(new GetMetricStatisticsCommand(overAnHour(service, metricName, [statistic]))))
      .Datapoints ?? [];
  return point?.[statistic] ?? 0;
};

/** The alarms of a local stack (named `<local stack name>-<logical id>`). */
export const stackAlarms = async (
  cw: CloudWatchClient,
  localStackName: string,
): Promise<MetricAlarm[]> =>
  (await cw.send(new DescribeAlarmsCommand({ AlarmNamePrefix: `${localStackName}-` })))
    .MetricAlarms ?? [];

/** The stack's alarm whose logical id starts with `prefix` (`AlarmsRejectedMessages`…). */
export const stackAlarm = async (
  cw: CloudWatchClient,
  localStackName: string,
  prefix: string,
): Promise<MetricAlarm> => {
  const found = (await stackAlarms(cw, localStackName)).find((a) =>
    a.AlarmName?.startsWith(`${localStackName}-${prefix}`),
  );
  if (!found) throw new Error(`no alarm ${prefix}`);
  return found;
};
