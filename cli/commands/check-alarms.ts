/**
 * `onceflow check` on the stack's alarms, and what `--fix` changes to put them back. An alarm
 * whose actions were turned off (`DisableAlarmActions`, to quiet it during an incident) tells
 * nobody when it fires again: a DLQ filling after the incident goes unseen until its messages
 * expire. An alarm deleted by hand watches nothing, and no deploy creates it again (the stack
 * still lists it). Pure.
 */
import { StandardUnit } from '@aws-sdk/client-cloudwatch';
import * as v from 'valibot';
import type { AlarmDefinition, AlarmStatus } from './alarms.ts';
import type { Drift, LiveStack } from './check-drifts.ts';
import { DELETED, type Finding } from './check-rules.ts';
import { type Template, templateBoolean, templateNumber } from './check-template.ts';

export const ALARM_SUBJECT = 'alarm';
const NO_EMAIL = ' (none configured: no alarm email)';

/**
 * What an operator changed of the alarm's definition since the deploy (`Threshold 1 → 100`,
 * live → deployed), as PutMetricAlarm would; none when it is the template's.
 */
export const definitionChanges = (live: AlarmDefinition, deployed: AlarmProperties): string[] => {
  const pairs: [string, unknown, unknown][] = [
    ['Statistic', live.Statistic, deployed.Statistic],
    ['Period', live.Period, deployed.Period],
    ['EvaluationPeriods', live.EvaluationPeriods, deployed.EvaluationPeriods],
    [
      'DatapointsToAlarm',
      live.DatapointsToAlarm ?? live.EvaluationPeriods,
      deployed.DatapointsToAlarm ?? deployed.EvaluationPeriods,
    ],
    ['Threshold', live.Threshold, deployed.Threshold],
    ['ComparisonOperator', live.ComparisonOperator, deployed.ComparisonOperator],
    [
      'TreatMissingData',
      live.TreatMissingData ?? 'missing',
      deployed.TreatMissingData ?? 'missing',
    ],
    [
      'AlarmActions',
      [...live.AlarmActions].sort().join(', ') || 'none',
      [...(deployed.AlarmActions ?? [])].sort().join(', ') || 'none',
    ],
  ];
  return pairs.flatMap(([name, was, is]) => (was === is ? [] : [`${name} ${was} → ${is}`]));
};

/**
 * One finding per alarm the stack declares; with the deployed definitions (by logical id), an
 * alarm whose definition was changed by hand is flagged too.
 */
export const judgeAlarms = (
  alarms: readonly AlarmStatus[],
  deployed?: ReadonlyMap<string, AlarmProperties>,
): Finding[] =>
  alarms.map((a): Finding => {
    const base = { subject: ALARM_SUBJECT, name: a.id };
    if ('missing' in a)
      return {
        ...base,
        verdict: 'fail',
        detail: `${a.alarmName} ${DELETED}: nothing watches its condition, and CloudFormation still lists it, so \`cdk deploy\` does not create it again`,
      };
    const template = deployed?.get(a.logicalId);
    const changed = template ? definitionChanges(a.definition, template) : [];
    const edited =
      changed.length === 0
        ? ''
        : `; changed by hand since the deploy (${changed.join('; ')}): it fires otherwise than deployed`;
    if (a.actionsEnabled)
      return {
        ...base,
        verdict: changed.length === 0 ? 'ok' : 'warn',
        detail: `${a.state}, actions on${a.actions === 0 ? NO_EMAIL : ''}${edited}`,
      };
    return a.actions > 0
      ? {
          ...base,
          verdict: 'fail',
          detail: `${a.state}, actions off: nobody is told when it fires (a DLQ filling unseen loses its messages when they expire)${edited}`,
        }
      : {
          ...base,
          verdict: 'warn',
          detail: `${a.state}, actions off (it has none yet: an alarm email deployed later would not be sent)${edited}`,
        };
  });

/** The template's alarms, resolved, by logical id: those whose properties resolve. */
export const deployedAlarms = (
  template: Template,
  resolve: (value: unknown) => unknown,
): Map<string, AlarmProperties> =>
  new Map(
    Object.entries(template.Resources).flatMap(([id, r]) => {
      if (r.Type !== 'AWS::CloudWatch::Alarm') return [];
      const parsed = v.safeParse(AlarmPropertiesSchema, resolve(r.Properties));
      return parsed.success ? [[id, parsed.output] as const] : [];
    }),
  );

/**
 * The findings as `check` prints them: the alarms found fine in one line (`18 alarms: OK,
 * actions on`), each other one in its own. `--json` keeps one finding per alarm.
 */
export const foldAlarms = (findings: readonly Finding[]): Finding[] => {
  const fine = findings.filter((f) => f.subject === ALARM_SUBJECT && f.verdict === 'ok');
  if (fine.length < 2) return [...findings];
  // Each detail starts with the alarm's state (`judgeAlarms`).
  const firing = fine.filter((f) => f.detail.startsWith('ALARM,')).length;
  const noEmail = fine.every((f) => f.detail.endsWith(NO_EMAIL));
  const folded: Finding = {
    subject: ALARM_SUBJECT,
    name: `${fine.length} alarms`,
    verdict: 'ok',
    detail: `actions on${noEmail ? NO_EMAIL : ''}${firing > 0 ? `; ${firing} in ALARM (\`onceflow status\` says why)` : ''}`,
  };
  const at = findings.indexOf(fine[0] as Finding);
  const rest = findings.filter((f) => !fine.includes(f));
  return [...rest.slice(0, at), folded, ...rest.slice(at)];
};

/**
 * An alarm as `PutMetricAlarm` creates it, from its template properties. Strict: a property not
 * listed here (metric math, an extended statistic) is not re-created, so neither is the alarm.
 */
export const AlarmPropertiesSchema = v.strictObject({
  AlarmName: v.optional(v.string()),
  AlarmDescription: v.optional(v.string()),
  ActionsEnabled: v.optional(templateBoolean),
  AlarmActions: v.optional(v.array(v.string())),
  OKActions: v.optional(v.array(v.string())),
  InsufficientDataActions: v.optional(v.array(v.string())),
  MetricName: v.string(),
  Namespace: v.string(),
  Statistic: v.picklist(['SampleCount', 'Average', 'Sum', 'Minimum', 'Maximum']),
  Dimensions: v.optional(v.array(v.strictObject({ Name: v.string(), Value: v.string() }))),
  Period: templateNumber,
  Unit: v.optional(v.enum(StandardUnit)),
  EvaluationPeriods: templateNumber,
  DatapointsToAlarm: v.optional(templateNumber),
  Threshold: templateNumber,
  ComparisonOperator: v.picklist([
    'GreaterThanOrEqualToThreshold',
    'GreaterThanThreshold',
    'LessThanThreshold',
    'LessThanOrEqualToThreshold',
  ]),
  TreatMissingData: v.optional(v.picklist(['breaching', 'notBreaching', 'ignore', 'missing'])),
});
export type AlarmProperties = v.InferOutput<typeof AlarmPropertiesSchema>;

const OPERATORS: Record<AlarmProperties['ComparisonOperator'], string> = {
  GreaterThanOrEqualToThreshold: '≥',
  GreaterThanThreshold: '>',
  LessThanThreshold: '<',
  LessThanOrEqualToThreshold: '≤',
};

/** For each alarm `check` flagged: the call that puts it back, or why none can. */
export const alarmDrifts = (
  template: Template,
  live: LiveStack,
  resolve: (value: unknown) => unknown,
): Drift[] =>
  (live.alarms ?? []).flatMap((a): Drift[] => {
    const answers = [{ subject: ALARM_SUBJECT, name: a.id }];
    const properties = template.Resources[a.logicalId]?.Properties;
    if (!('missing' in a)) {
      const deployed = v.safeParse(AlarmPropertiesSchema, resolve(properties));
      const changed = deployed.success ? definitionChanges(a.definition, deployed.output) : [];
      // One PutMetricAlarm puts the whole definition back, its actions switched on included.
      if (deployed.success && changed.length > 0)
        return [
          {
            answers,
            repair: {
              subject: ALARM_SUBJECT,
              name: a.id,
              change: `put back ${a.alarmName}: ${changed.join('; ')}${a.actionsEnabled ? '' : '; actions off → on'}`,
              request: {
                kind: 'create-alarm',
                alarm: { ...deployed.output, AlarmName: a.alarmName },
              },
            },
          },
        ];
      return a.actionsEnabled
        ? []
        : [
            {
              answers,
              repair: {
                subject: ALARM_SUBJECT,
                name: a.id,
                change: 'actions off → on',
                request: { kind: 'alarm-actions', alarmName: a.alarmName },
              },
            },
          ];
    }
    const parsed = v.safeParse(AlarmPropertiesSchema, resolve(properties));
    if (!properties || !parsed.success)
      return [
        {
          answers,
          unresolvable: properties
            ? 'its template properties do not resolve through the stack, or hold what `--fix` does not create (metric math)'
            : 'the deployed template does not declare it',
        },
      ];
    const p = parsed.output;
    const alarm = { ...p, AlarmName: a.alarmName };
    return [
      {
        answers,
        repair: {
          subject: ALARM_SUBJECT,
          name: a.id,
          change: `create ${a.alarmName}: ${p.Statistic} of ${p.Namespace} ${p.MetricName} ${OPERATORS[p.ComparisonOperator]} ${p.Threshold} over ${p.EvaluationPeriods} × ${p.Period} s`,
          request: { kind: 'create-alarm', alarm },
        },
      },
    ];
  });
