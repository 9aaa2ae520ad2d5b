/**
 * The stack's CloudWatch alarms as `status`, `check` and `onceflow alarms` read them, on every
 * target: which alarms
 * the stack declares (CloudFormation's `ListStackResources`), then each one's state and whether
 * its actions are on (`DescribeAlarms`). An alarm the stack lists that CloudWatch does not have
 * was deleted by hand: no deploy creates it again, since CloudFormation still lists it.
 */
import { CloudFormationClient, paginateListStackResources } from '@aws-sdk/client-cloudformation';
import {
  CloudWatchClient,
  DescribeAlarmsCommand,
  type MetricAlarm,
  paginateDescribeAlarmHistory,
  SetAlarmStateCommand,
} from '@aws-sdk/client-cloudwatch';
import Table from 'cli-table3';
import type { Command } from 'commander';
import * as v from 'valibot';
import { alarmId } from '../../local/alarms.ts';
import { terminalSafe } from '../../local/render.ts';
import { json, run, target } from '../program.ts';
import { CliError, type Target } from '../target.ts';
import { sinceMs } from './logs.ts';

export type AlarmState = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';

/** The settings of an alarm that decide when it fires and whom it tells. */
export interface AlarmDefinition {
  readonly Statistic: string | undefined;
  readonly Period: number | undefined;
  readonly EvaluationPeriods: number | undefined;
  readonly DatapointsToAlarm: number | undefined;
  readonly Threshold: number | undefined;
  readonly ComparisonOperator: string | undefined;
  readonly TreatMissingData: string | undefined;
  readonly AlarmActions: readonly string[];
}

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
      /** When it entered its state, ISO 8601. */
      readonly since?: string;
      /** What `check` compares with the deployed template. */
      readonly definition: AlarmDefinition;
    }
  | {
      readonly id: string;
      readonly logicalId: string;
      readonly alarmName: string;
      readonly missing: true;
    };

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
          ...(a.StateTransitionedTimestamp
            ? { since: a.StateTransitionedTimestamp.toISOString() }
            : {}),
          definition: {
            Statistic: a.Statistic,
            Period: a.Period,
            EvaluationPeriods: a.EvaluationPeriods,
            DatapointsToAlarm: a.DatapointsToAlarm,
            Threshold: a.Threshold,
            ComparisonOperator: a.ComparisonOperator,
            TreatMissingData: a.TreatMissingData,
            AlarmActions: a.AlarmActions ?? [],
          },
        };
      });
  } finally {
    cloudFormation.destroy();
    cloudWatch.destroy();
  }
};

/** A state change of one of the stack's alarms. */
export interface AlarmChange {
  readonly id: string;
  readonly at: string;
  readonly summary: string;
  /** CloudWatch's reason for the new state, from the change's `HistoryData`, when it has one. */
  readonly reason?: string;
}

/** What `--history` reads of a state change's `HistoryData` (CloudWatch documents no schema). */
const HistoryDataSchema = v.object({
  newState: v.object({ stateReason: v.optional(v.string()) }),
});

/** The new state's reason in a change's `HistoryData`; none when it has none or another shape. */
const reasonIn = (historyData: string | undefined): string | undefined => {
  if (historyData === undefined) return undefined;
  try {
    const parsed = v.safeParse(HistoryDataSchema, JSON.parse(historyData));
    return parsed.success ? parsed.output.newState.stateReason : undefined;
  } catch (error) {
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
};

/** The stack's alarms' state changes since `since`, newest first (`DescribeAlarmHistory`). */
const stateChanges = async (
  t: Target,
  alarms: readonly AlarmStatus[],
  since: Date,
): Promise<AlarmChange[]> => {
  const cloudWatch = new CloudWatchClient(t.clientConfig ?? { region: t.region });
  try {
    const changes: AlarmChange[] = [];
    for (const a of alarms) {
      for await (const page of paginateDescribeAlarmHistory(
        { client: cloudWatch },
        { AlarmName: a.alarmName, HistoryItemType: 'StateUpdate', StartDate: since },
      ))
        for (const item of page.AlarmHistoryItems ?? []) {
          if (!item.Timestamp) continue;
          const reason = reasonIn(item.HistoryData);
          changes.push({
            id: a.id,
            at: item.Timestamp.toISOString(),
            summary: item.HistorySummary ?? '',
            ...(reason === undefined ? {} : { reason }),
          });
        }
    }
    return changes.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  } finally {
    cloudWatch.destroy();
  }
};

/**
 * `--test`: the alarm set in ALARM with a reason that says it is a drill, so that whoever its
 * actions notify sees one; it returns to its real state at CloudWatch's next evaluation.
 */
const drill = async (t: Target, alarms: readonly AlarmStatus[], id: string): Promise<number> => {
  const alarm = alarms.find((a) => a.id === id || a.alarmName === id);
  if (!alarm)
    throw new CliError(`no alarm ${id}: the stack's are ${alarms.map((a) => a.id).join(', ')}`);
  if ('missing' in alarm)
    throw new CliError(`${id} was deleted: \`onceflow check --fix\` creates it again`);
  // Actions run on a change of state only: an alarm already in ALARM would notify nobody.
  if (alarm.state === 'ALARM')
    throw new CliError(`${id} is in ALARM already: its actions ran when it entered it`);
  const cloudWatch = new CloudWatchClient(t.clientConfig ?? { region: t.region });
  try {
    await cloudWatch.send(
      new SetAlarmStateCommand({
        AlarmName: alarm.alarmName,
        StateValue: 'ALARM',
        StateReason: `onceflow alarms --test: a drill of this alarm's notifications (it was ${alarm.state})`,
      }),
    );
  } finally {
    cloudWatch.destroy();
  }
  const n = alarm.definition.AlarmActions.length;
  const what =
    n === 0
      ? 'it has no ALARM action (no alarm email configured), so nobody is notified'
      : alarm.actionsEnabled
        ? `its ${n === 1 ? 'action runs' : `${n} actions run`} now`
        : 'its actions are off, so nobody is notified: `onceflow check --fix` turns them on';
  console.log(
    `${id} set in ALARM: ${what}; CloudWatch puts it back at its next evaluation (within a minute)`,
  );
  return 0;
};

const second = (iso: string | undefined) => iso?.replace(/\.\d+Z$/, 'Z') ?? '';

export const register = (program: Command): void => {
  program
    .command('alarms')
    .description(
      'the stack’s alarms: state, since when, actions on or off, CloudWatch’s reason; --history for their state changes',
    )
    .option(
      '--json',
      'print JSON: [{id, logicalId, alarmName, state, since, reason, actionsEnabled, actions} | {id, logicalId, alarmName, missing}]',
    )
    .option(
      '--history [since]',
      'their state changes, newest first, since a duration back (default 24h) or a time',
    )
    .option(
      '--test <alarm>',
      'a drill of one alarm’s notifications: sets it in ALARM (SetAlarmState), so its actions run now; CloudWatch puts its state back at its next evaluation',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  npx onceflow alarms\n  npx onceflow --target aws alarms --history 2h\n  npx onceflow --target aws alarms --test ordersDlqMessages',
    )
    .action(
      run(async (o: { json?: boolean; history?: string | true; test?: string }) => {
        const t = await target();
        const alarms = await stackAlarms(t);
        if (o.test !== undefined) return drill(t, alarms, o.test);
        if (o.history !== undefined) {
          const since = new Date(sinceMs(o.history === true ? '24h' : o.history, Date.now()));
          const changes = await stateChanges(
            t,
            alarms.filter((a) => !('missing' in a)),
            since,
          );
          if (o.json) json(changes);
          else if (changes.length === 0)
            console.log(`no state change since ${since.toISOString()}`);
          else
            for (const c of changes)
              console.log(
                terminalSafe(
                  `${second(c.at)}  ${c.id}: ${c.summary}${c.reason ? `: ${c.reason}` : ''}`,
                ),
              );
          return 0;
        }
        if (o.json) {
          json(alarms);
          return 0;
        }
        const table = new Table({
          head: ['alarm', 'state', 'since', 'actions', 'reason'],
          style: { head: [], border: [], compact: true },
          colWidths: [null, null, null, null, 70],
          wordWrap: true,
        });
        for (const a of alarms)
          table.push(
            'missing' in a
              ? [a.id, 'MISSING', '', '', '`onceflow check --fix` creates it again']
              : [
                  a.id,
                  a.state,
                  second(a.since),
                  a.actions === 0
                    ? a.actionsEnabled
                      ? 'none'
                      : 'off (none)'
                    : a.actionsEnabled
                      ? 'on'
                      : 'OFF',
                  terminalSafe(a.reason),
                ],
          );
        console.log(table.toString());
        return 0;
      }),
    );
};
