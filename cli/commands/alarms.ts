/**
 * The stack's CloudWatch alarms as `status` and `check` read them, on every target: which alarms
 * the stack declares (CloudFormation's `ListStackResources`), then each one's state and whether
 * its actions are on (`DescribeAlarms`). An alarm the stack lists that CloudWatch does not have
 * was deleted by hand: no deploy creates it again, since CloudFormation still lists it.
 */
import { CloudFormationClient, paginateListStackResources } from '@aws-sdk/client-cloudformation';
import {
  CloudWatchClient,
  DescribeAlarmsCommand,
  type MetricAlarm,
} from '@aws-sdk/client-cloudwatch';
import type { Target } from '../target.ts';

export type AlarmState = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';

export type AlarmStatus =
  | {
      /** The name `status` and `check` give it: its construct's id (`IngestOrdersErrors`). */
      readonly id: string;
      readonly logicalId: string;
      readonly alarmName: string;
      readonly state: AlarmState;
      readonly reason: string;
      readonly actionsEnabled: boolean;
      /** How many actions it runs on any state change (0: no alarm email configured). */
      readonly actions: number;
    }
  | {
      readonly id: string;
      readonly logicalId: string;
      readonly alarmName: string;
      readonly missing: true;
    };

/** `AlarmsIngestOrdersErrorsEBDEFE6D` → `IngestOrdersErrors`: the id CDK's construct was given. */
export const alarmId = (logicalId: string) =>
  logicalId.replace(/^Alarms/, '').replace(/[0-9A-F]{8}$/, '');

const STATES = new Set<string>(['OK', 'ALARM', 'INSUFFICIENT_DATA']);
const isState = (s: string | undefined): s is AlarmState => s !== undefined && STATES.has(s);

/** The stack's alarms, by logical id order; names from CloudFormation, states from CloudWatch. */
export const stackAlarms = async (t: Target): Promise<AlarmStatus[]> => {
  const config = t.clientConfig ?? { region: t.region };
  const cloudFormation = new CloudFormationClient(config);
  const cloudWatch = new CloudWatchClient(config);
  try {
    const declared: { logicalId: string; alarmName: string }[] = [];
    for await (const page of paginateListStackResources(
      { client: cloudFormation },
      { StackName: t.stackName },
    ))
      for (const r of page.StackResourceSummaries ?? [])
        if (
          r.ResourceType === 'AWS::CloudWatch::Alarm' &&
          r.LogicalResourceId &&
          r.PhysicalResourceId
        )
          declared.push({ logicalId: r.LogicalResourceId, alarmName: r.PhysicalResourceId });
    const described = new Map<string, MetricAlarm>();
    const describe = async (names: string[]) =>
      (await cloudWatch.send(new DescribeAlarmsCommand({ AlarmNames: names, MaxRecords: 100 })))
        .MetricAlarms ?? [];
    // DescribeAlarms takes at most 100 names.
    for (let i = 0; i < declared.length; i += 100)
      for (const a of await describe(declared.slice(i, i + 100).map((d) => d.alarmName)))
        if (a.AlarmName) described.set(a.AlarmName, a);
    return declared
      .sort((a, b) => (a.logicalId < b.logicalId ? -1 : 1))
      .map(({ logicalId, alarmName }): AlarmStatus => {
        const a = described.get(alarmName);
        const id = alarmId(logicalId);
        if (!a || !isState(a.StateValue)) return { id, logicalId, alarmName, missing: true };
        return {
          id,
          logicalId,
          alarmName,
          state: a.StateValue,
          reason: a.StateReason ?? '',
          actionsEnabled: a.ActionsEnabled !== false,
          actions:
            (a.AlarmActions?.length ?? 0) +
            (a.OKActions?.length ?? 0) +
            (a.InsufficientDataActions?.length ?? 0),
        };
      });
  } finally {
    cloudFormation.destroy();
    cloudWatch.destroy();
  }
};
