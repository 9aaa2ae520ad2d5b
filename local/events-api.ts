/**
 * EventBridge's API for the running stacks' scheduled rules, on the local edge: `ListRules`,
 * `DescribeRule`, `ListTargetsByRule`, `ListRuleNamesByTarget`, and `EnableRule` / `DisableRule`,
 * which pause and resume a rule's runs as on AWS (`aws events disable-rule --name …` before a
 * backfill, say). Rules live on the default event bus. Anything else is refused by name.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import { answerJson11, failJson11, readJsonBody } from './http.ts';
import type { LocalSchedule } from './rules.ts';

export const EVENTS_TARGET_PREFIX = 'AWSEvents.';

/** What a running stack lends the edge: its scheduled rules and their state. */
export interface RulesBackend {
  readonly region: string;
  readonly account: string;
  readonly schedules: readonly LocalSchedule[];
  /** The ARN of a function target, by its logical id. */
  functionArn(functionLogicalId: string): string | undefined;
  enabled(ruleName: string): boolean;
  setEnabled(ruleName: string, enabled: boolean): void;
}

const answer = (res: ServerResponse, body: unknown) => answerJson11(res, 200, body);
const fail = failJson11;

const RequestSchema = v.object({
  Name: v.optional(v.string()),
  NamePrefix: v.optional(v.string()),
  Rule: v.optional(v.string()),
  TargetArn: v.optional(v.string()),
  EventBusName: v.optional(v.string()),
});

interface Rule {
  readonly backend: RulesBackend;
  readonly name: string;
  readonly targets: readonly LocalSchedule[];
}

/** The rules of every running stack, one per name with its function targets. */
const rulesOf = (backends: readonly RulesBackend[]): Rule[] => {
  const rules = new Map<string, Rule>();
  for (const backend of backends)
    for (const schedule of backend.schedules) {
      const rule = rules.get(schedule.ruleName);
      if (rule) rules.set(schedule.ruleName, { ...rule, targets: [...rule.targets, schedule] });
      else rules.set(schedule.ruleName, { backend, name: schedule.ruleName, targets: [schedule] });
    }
  return [...rules.values()].sort((a, b) => a.name.localeCompare(b.name));
};

const ruleOf = (rule: Rule) => {
  const [first] = rule.targets;
  return {
    Name: rule.name,
    Arn: `arn:aws:events:${rule.backend.region}:${rule.backend.account}:rule/${rule.name}`,
    State: rule.backend.enabled(rule.name) ? 'ENABLED' : 'DISABLED',
    ...(first?.description === undefined ? {} : { Description: first.description }),
    ScheduleExpression: first?.expression.text,
    EventBusName: 'default',
  };
};

const targetOf = (rule: Rule, schedule: LocalSchedule) => ({
  Id: schedule.targetId,
  Arn: rule.backend.functionArn(schedule.functionLogicalId),
  ...(schedule.input.kind === 'constant' ? { Input: JSON.stringify(schedule.input.value) } : {}),
  ...(schedule.input.kind === 'path'
    ? {
        InputPath: `$${schedule.input.path
          .map((key) => (typeof key === 'number' ? `[${key}]` : `.${key}`))
          .join('')}`,
      }
    : {}),
  ...(schedule.retryPolicy === undefined ? {} : { RetryPolicy: schedule.retryPolicy }),
});

export const answerEvents = async (
  req: IncomingMessage,
  res: ServerResponse,
  action: string,
  backends: readonly RulesBackend[],
): Promise<void> => {
  const body = await readJsonBody(req);
  if (!body) return fail(res, 400, 'SerializationException', 'the request body is not JSON');
  const parsed = v.safeParse(RequestSchema, body.value);
  if (!parsed.success) return fail(res, 400, 'ValidationException', parsed.issues[0].message);
  const input = parsed.output;
  if (input.EventBusName !== undefined && input.EventBusName !== 'default')
    return fail(
      res,
      400,
      'ResourceNotFoundException',
      `Event bus ${input.EventBusName} does not exist.`,
    );
  const rules = rulesOf(backends);
  const named = (name: string | undefined) => {
    const rule = rules.find((r) => r.name === name);
    if (!rule)
      fail(
        res,
        400,
        'ResourceNotFoundException',
        `Rule ${name} does not exist on EventBus default.`,
      );
    return rule;
  };
  switch (action) {
    case 'ListRules':
      return answer(res, {
        Rules: rules.filter((r) => r.name.startsWith(input.NamePrefix ?? '')).map(ruleOf),
      });
    case 'DescribeRule': {
      const rule = named(input.Name);
      return rule && answer(res, { ...ruleOf(rule), CreatedBy: rule.backend.account });
    }
    case 'ListTargetsByRule': {
      const rule = named(input.Rule);
      return rule && answer(res, { Targets: rule.targets.map((t) => targetOf(rule, t)) });
    }
    case 'ListRuleNamesByTarget':
      return answer(res, {
        RuleNames: rules
          .filter((r) => r.targets.some((t) => targetOf(r, t).Arn === input.TargetArn))
          .map((r) => r.name),
      });
    case 'EnableRule':
    case 'DisableRule': {
      const rule = named(input.Name);
      if (!rule) return;
      rule.backend.setEnabled(rule.name, action === 'EnableRule');
      return answer(res, {});
    }
    default:
      return fail(
        res,
        400,
        'UnknownOperationException',
        `the onceflow local edge serves EventBridge's ListRules, DescribeRule, ListTargetsByRule, ListRuleNamesByTarget, EnableRule and DisableRule for the running stacks' scheduled rules, not ${action}`,
      );
  }
};
