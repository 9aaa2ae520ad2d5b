/**
 * CloudWatch on the local edge: its alarms (`DescribeAlarms`, `DescribeAlarmHistory`,
 * `PutMetricAlarm`, `DeleteAlarms`, `SetAlarmState`, `EnableAlarmActions`,
 * `DisableAlarmActions`), the metric actions of `cloudwatch-metrics-api.ts`, one dispatch for
 * every protocol, and the AWS JSON 1.0 protocol the AWS SDK for JavaScript v3 speaks. Errors
 * carry CloudWatch's query-compatible codes, as SDKs read them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import { AlarmNotFoundError, type AlarmRecord } from './alarm-book.ts';
import { ALARM_STATES, MetricAlarmSchema } from './alarms.ts';
import { METRIC_OPERATIONS } from './cloudwatch-metrics-api.ts';
import {
  type CloudWatchBackend,
  CloudWatchError,
  MaxRecords,
  type Operation,
  type Output,
  operation,
  Seconds,
  seconds,
} from './cloudwatch-operation.ts';
import { readJsonBody } from './http.ts';

export const CLOUDWATCH_TARGET_PREFIX = 'GraniteServiceVersion20100801.';

const Names = v.pipe(v.array(v.pipe(v.string(), v.minLength(1))), v.maxLength(100));

/** An alarm as `DescribeAlarms` describes it (timestamps in epoch seconds, as JSON 1.0 has them). */
const described = (r: AlarmRecord) => {
  const a = r.alarm;
  return {
    AlarmName: a.AlarmName,
    AlarmArn: r.arn,
    ...(a.AlarmDescription === undefined ? {} : { AlarmDescription: a.AlarmDescription }),
    AlarmConfigurationUpdatedTimestamp: seconds(r.configurationUpdatedMs),
    ActionsEnabled: a.ActionsEnabled,
    OKActions: a.OKActions,
    AlarmActions: a.AlarmActions,
    InsufficientDataActions: a.InsufficientDataActions,
    StateValue: r.state,
    StateReason: r.reason,
    ...(r.reasonData === undefined ? {} : { StateReasonData: r.reasonData }),
    StateUpdatedTimestamp: seconds(r.stateUpdatedMs),
    StateTransitionedTimestamp: seconds(r.transitionedMs),
    MetricName: a.MetricName,
    Namespace: a.Namespace,
    Statistic: a.Statistic,
    Dimensions: a.Dimensions,
    Period: a.Period,
    ...(a.Unit === undefined ? {} : { Unit: a.Unit }),
    EvaluationPeriods: a.EvaluationPeriods,
    ...(a.DatapointsToAlarm === undefined ? {} : { DatapointsToAlarm: a.DatapointsToAlarm }),
    Threshold: a.Threshold,
    ComparisonOperator: a.ComparisonOperator,
    TreatMissingData: a.TreatMissingData,
  };
};

/** Evaluates every alarm now, its SQS metrics sampled first; the records as they are then. */
export const evaluated = async (cw: CloudWatchBackend, nowMs: number): Promise<AlarmRecord[]> => {
  await cw.sample(cw.alarms.metrics(), nowMs);
  cw.alarms.evaluate((metric, from, to) => cw.metrics.window(metric, from, to), nowMs);
  return cw.alarms.list();
};

/** A missing alarm, as CloudWatch names it. */
const notFound = <T>(work: () => T): T => {
  try {
    return work();
  } catch (error) {
    if (error instanceof AlarmNotFoundError)
      throw new CloudWatchError('ResourceNotFound', 'ResourceNotFound', error.message, 404);
    throw error;
  }
};

const OPERATIONS: Record<string, Operation> = {
  ...METRIC_OPERATIONS,
  DescribeAlarms: operation(
    v.object({
      AlarmNames: v.optional(Names),
      AlarmNamePrefix: v.optional(v.string()),
      StateValue: v.optional(v.picklist(ALARM_STATES)),
      ActionPrefix: v.optional(v.string()),
      MaxRecords,
      NextToken: v.optional(v.pipe(v.string(), v.regex(/^\d+$/, 'NextToken is not valid'))),
    }),
    async (cw, q, nowMs) => {
      if (q.AlarmNames !== undefined && q.AlarmNamePrefix !== undefined)
        throw new CloudWatchError(
          'InvalidParameterCombinationException',
          'InvalidParameterCombination',
          'AlarmNames and AlarmNamePrefix cannot be given together',
        );
      const { AlarmNames: names, AlarmNamePrefix: prefix, ActionPrefix: action } = q;
      const selected = (await evaluated(cw, nowMs)).filter(
        ({ alarm: a, state }) =>
          (names === undefined || names.includes(a.AlarmName)) &&
          (prefix === undefined || a.AlarmName.startsWith(prefix)) &&
          (q.StateValue === undefined || state === q.StateValue) &&
          (action === undefined ||
            [...a.AlarmActions, ...a.OKActions, ...a.InsufficientDataActions].some((x) =>
              x.startsWith(action),
            )),
      );
      const start = Number(q.NextToken ?? 0);
      const size = q.MaxRecords ?? 50;
      return {
        MetricAlarms: selected.slice(start, start + size).map(described),
        CompositeAlarms: [],
        ...(start + size < selected.length ? { NextToken: String(start + size) } : {}),
      };
    },
  ),
  DescribeAlarmHistory: operation(
    v.object({
      AlarmName: v.optional(v.string()),
      HistoryItemType: v.optional(v.picklist(['ConfigurationUpdate', 'StateUpdate', 'Action'])),
      StartDate: v.optional(Seconds),
      EndDate: v.optional(Seconds),
      MaxRecords,
    }),
    async (cw, q, nowMs) => {
      await evaluated(cw, nowMs);
      const items = cw.alarms
        .history()
        .filter(
          (h) =>
            (q.AlarmName === undefined || h.alarmName === q.AlarmName) &&
            (q.HistoryItemType === undefined || h.type === q.HistoryItemType) &&
            (q.StartDate === undefined || h.timestampMs >= q.StartDate) &&
            (q.EndDate === undefined || h.timestampMs <= q.EndDate),
        )
        .slice(0, q.MaxRecords ?? 100);
      return {
        AlarmHistoryItems: items.map((h) => ({
          AlarmName: h.alarmName,
          AlarmType: 'MetricAlarm',
          Timestamp: seconds(h.timestampMs),
          HistoryItemType: h.type,
          HistorySummary: h.summary,
          ...(h.data === undefined ? {} : { HistoryData: h.data }),
        })),
      };
    },
  ),
  PutMetricAlarm: operation(MetricAlarmSchema, (cw, alarm, nowMs) => {
    cw.alarms.put(alarm, nowMs);
    return {};
  }),
  DeleteAlarms: operation(v.object({ AlarmNames: Names }), (cw, q) => {
    notFound(() => cw.alarms.delete(q.AlarmNames));
    return {};
  }),
  EnableAlarmActions: operation(v.object({ AlarmNames: Names }), (cw, q, nowMs) => {
    cw.alarms.setActionsEnabled(q.AlarmNames, true, nowMs);
    return {};
  }),
  DisableAlarmActions: operation(v.object({ AlarmNames: Names }), (cw, q, nowMs) => {
    cw.alarms.setActionsEnabled(q.AlarmNames, false, nowMs);
    return {};
  }),
  SetAlarmState: operation(
    v.object({
      AlarmName: v.string(),
      StateValue: v.picklist(ALARM_STATES),
      StateReason: v.pipe(v.string(), v.maxLength(1023)),
      StateReasonData: v.optional(v.string()),
    }),
    (cw, q, nowMs) => {
      if (q.StateReasonData !== undefined) {
        try {
          JSON.parse(q.StateReasonData);
        } catch {
          throw new CloudWatchError(
            'InvalidFormatFault',
            'InvalidFormat',
            'StateReasonData is not JSON',
          );
        }
      }
      notFound(() =>
        cw.alarms.setState(q.AlarmName, q.StateValue, q.StateReason, q.StateReasonData, nowMs),
      );
      return {};
    },
  ),
};

export const CLOUDWATCH_ACTIONS = new Set(Object.keys(OPERATIONS));

/** One CloudWatch action's output, or a CloudWatchError. */
export const cloudWatchAction = async (
  cw: CloudWatchBackend,
  action: string,
  body: unknown,
  nowMs = Date.now(),
): Promise<Output> => {
  const run = OPERATIONS[action];
  if (!run)
    throw new CloudWatchError(
      'InvalidAction',
      'InvalidAction',
      `the onceflow local edge answers ${[...CLOUDWATCH_ACTIONS].join(', ')} of CloudWatch, not ${action}`,
    );
  return run(cw, body, nowMs);
};

/** Answers a JSON 1.0 CloudWatch request (`X-Amz-Target: GraniteServiceVersion20100801.<Action>`). */
export const answerCloudWatch = async (
  req: IncomingMessage,
  res: ServerResponse,
  action: string,
  cw: CloudWatchBackend,
): Promise<void> => {
  const fail = (error: CloudWatchError) => {
    res.writeHead(error.status, {
      'content-type': 'application/x-amz-json-1.0',
      'x-amzn-query-error': `${error.code};Sender`,
    });
    res.end(
      JSON.stringify({ __type: `com.amazonaws.cloudwatch#${error.shape}`, message: error.message }),
    );
  };
  const parsed = await readJsonBody(req);
  if (!parsed)
    return fail(
      new CloudWatchError('InvalidFormatFault', 'InvalidFormat', 'the request body is not JSON'),
    );
  try {
    const output = await cloudWatchAction(cw, action, parsed.value);
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
    res.end(JSON.stringify(output));
  } catch (error) {
    if (!(error instanceof CloudWatchError)) throw error;
    fail(error);
  }
};
