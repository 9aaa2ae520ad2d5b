/**
 * A schedule deleted by hand, for `onceflow check --fix`: when no rule invokes a function that
 * the deployed template schedules, the rule is created again as the template sets it (`PutRule`
 * with its name, schedule, state and description; `PutTargets` with its targets). CloudFormation
 * still lists the rule, so no `cdk deploy` creates it again. The function's permission for
 * EventBridge names the rule's ARN, which a rule of the same name has again, so it holds. Pure.
 */
import * as v from 'valibot';
import type { Drift, LiveStack } from './check-drifts.ts';
import { referenced, ScheduledRuleSchema, type Template, UNRESOLVED } from './check-template.ts';
import { FUNCTIONS, type FunctionKey } from './logs.ts';

const GetAttArn = v.object({ 'Fn::GetAtt': v.tuple([v.string(), v.literal('Arn')]) });

/** The logical ids of the scheduled rules whose targets name the function `fnId`. */
const rulesTargeting = (template: Template, fnId: string) =>
  Object.entries(template.Resources).flatMap(([id, r]) => {
    if (r.Type !== 'AWS::Events::Rule' || r.Properties.ScheduleExpression === undefined) return [];
    const targets = Array.isArray(r.Properties.Targets) ? r.Properties.Targets : [];
    const named = targets.some((t: unknown) => {
      const arn = v.safeParse(v.object({ Arn: GetAttArn }), t);
      return arn.success && arn.output.Arn['Fn::GetAtt'][0] === fnId;
    });
    return named ? [id] : [];
  });

export const scheduleDrifts = (
  template: Template,
  live: LiveStack,
  resolve: (value: unknown) => unknown,
  fn: FunctionKey,
): Drift[] => {
  if (live.triggers?.[fn] !== 'none') return [];
  const fnId = referenced(template, FUNCTIONS[fn]);
  if (fnId === undefined) return [];
  const answers = [{ subject: fn, name: 'schedule' }];
  return rulesTargeting(template, fnId).map((id): Drift => {
    const properties = template.Resources[id]?.Properties ?? {};
    const name = properties.Name ?? live.resources?.[id];
    if (name === undefined)
      return {
        answers,
        unresolvable: `rule ${id}'s name is not known: CloudFormation lists no such resource`,
      };
    const resolved = resolve({ ...properties, Name: name });
    if (resolved === UNRESOLVED)
      return { answers, unresolvable: `rule ${id}'s properties do not resolve through the stack` };
    const rule = v.safeParse(ScheduledRuleSchema, resolved);
    if (!rule.success)
      return {
        answers,
        unresolvable: `rule ${id} has a setting not re-created here (${v.getDotPath(rule.issues[0]) ?? 'its shape'}: ${rule.issues[0].message})`,
      };
    const r = rule.output;
    return {
      answers,
      repair: {
        subject: fn,
        name: 'schedule',
        change: `create rule ${r.Name}: ${r.ScheduleExpression}, ${r.State ?? 'ENABLED'}, ${r.Targets.length === 1 ? 'target' : 'targets'} ${r.Targets.map((t) => t.Id).join(', ')}`,
        request: { kind: 'create-rule', rule: r },
      },
    };
  });
};
