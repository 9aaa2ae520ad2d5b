/**
 * EventBridge's API for the running stacks' scheduled rules, on the local edge: `ListRules`,
 * `DescribeRule`, `ListTargetsByRule`, `ListRuleNamesByTarget`; `EnableRule` and `DisableRule`,
 * which pause and resume a rule's runs as on AWS (`aws events disable-rule --name …` before a
 * backfill, say); and `PutRule`, `PutTargets`, `RemoveTargets` and `DeleteRule`, which change
 * what runs (a rule deleted by hand during an incident, and created again). Rules live on the
 * default event bus; a target is one of its stack's functions. Anything else is refused by name.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import { answerJson11, failJson11, readJsonBody } from './http.ts';
import type { LocalRule, RuleRunner, RuleTarget } from './rule-runner.ts';
import { inputPath, type TargetInput } from './rules.ts';
import { InvalidScheduleExpressionError, parseScheduleExpression } from './schedule-expression.ts';

export const EVENTS_TARGET_PREFIX = 'AWSEvents.';

/** What a running stack lends the edge: its rules, and its functions to target. */
export interface RulesBackend {
  readonly stackName: string;
  readonly region: string;
  readonly account: string;
  readonly runner: RuleRunner;
  /** The ARN of one of the stack's functions, by logical id, and the reverse. */
  functionArn(functionLogicalId: string): string | undefined;
  functionOf(arn: string): string | undefined;
}

/** EventBridge's limits: targets per rule, and entries per `PutTargets` or `RemoveTargets`. */
const TARGETS_PER_RULE = 5;
const ENTRIES_PER_REQUEST = 10;
const NAME = /^[.\-_A-Za-z0-9]{1,64}$/;

const answer = (res: ServerResponse, body: unknown) => answerJson11(res, 200, body);
const fail = failJson11;

const TargetSchema = v.object({
  Id: v.string(),
  Arn: v.string(),
  Input: v.optional(v.string()),
  InputPath: v.optional(v.string()),
  InputTransformer: v.optional(v.unknown()),
  RetryPolicy: v.optional(v.record(v.string(), v.unknown())),
});

const RequestSchema = v.object({
  Name: v.optional(v.string()),
  NamePrefix: v.optional(v.string()),
  Rule: v.optional(v.string()),
  TargetArn: v.optional(v.string()),
  EventBusName: v.optional(v.string()),
  ScheduleExpression: v.optional(v.string()),
  EventPattern: v.optional(v.string()),
  State: v.optional(
    v.picklist(['ENABLED', 'DISABLED', 'ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS']),
  ),
  Description: v.optional(v.string()),
  Targets: v.optional(v.array(TargetSchema)),
  Ids: v.optional(v.array(v.string())),
});

interface Rule {
  readonly backend: RulesBackend;
  readonly rule: LocalRule;
}

/** The rules of every running stack, by name. */
const rulesOf = (backends: readonly RulesBackend[]): Rule[] =>
  backends
    .flatMap((backend) => backend.runner.rules().map((rule) => ({ backend, rule })))
    .sort((a, b) => a.rule.name.localeCompare(b.rule.name));

const arnOf = (backend: RulesBackend, name: string) =>
  `arn:aws:events:${backend.region}:${backend.account}:rule/${name}`;

const ruleOf = ({ backend, rule }: Rule) => ({
  Name: rule.name,
  Arn: arnOf(backend, rule.name),
  State: rule.enabled ? 'ENABLED' : 'DISABLED',
  ...(rule.description === undefined ? {} : { Description: rule.description }),
  ScheduleExpression: rule.expression.text,
  EventBusName: 'default',
});

const targetOf = (backend: RulesBackend, target: RuleTarget) => ({
  Id: target.targetId,
  Arn: backend.functionArn(target.functionLogicalId),
  ...(target.input.kind === 'constant' ? { Input: JSON.stringify(target.input.value) } : {}),
  ...(target.input.kind === 'path'
    ? {
        InputPath: `$${target.input.path
          .map((key) => (typeof key === 'number' ? `[${key}]` : `.${key}`))
          .join('')}`,
      }
    : {}),
  ...(target.retryPolicy === undefined ? {} : { RetryPolicy: target.retryPolicy }),
});

type TargetEntry = v.InferOutput<typeof TargetSchema>;

/** A target as the runner runs it, or why `PutTargets` fails its entry. */
const targetFrom = (backend: RulesBackend, t: TargetEntry): RuleTarget | string => {
  if (!NAME.test(t.Id)) return `the target Id ${t.Id} is not 1 to 64 of [.-_A-Za-z0-9]`;
  const functionLogicalId = backend.functionOf(t.Arn);
  if (functionLogicalId === undefined)
    return `${t.Arn} is not a function of ${backend.stackName}: the local runtime invokes its stack's functions only`;
  if (t.InputTransformer !== undefined) return 'an input transformer is not run locally';
  if (t.Input !== undefined && t.InputPath !== undefined)
    return 'a target takes one of Input, InputPath and InputTransformer';
  let input: TargetInput = { kind: 'event' };
  if (t.Input !== undefined)
    try {
      input = { kind: 'constant', value: JSON.parse(t.Input) };
    } catch {
      return 'Input is not valid JSON';
    }
  if (t.InputPath !== undefined) {
    const path = inputPath(t.InputPath);
    if (!path)
      return `the InputPath ${t.InputPath} is not run locally (dot notation and indices only)`;
    input = { kind: 'path', path };
  }
  return {
    targetId: t.Id,
    functionLogicalId,
    input,
    ...(t.RetryPolicy === undefined ? {} : { retryPolicy: t.RetryPolicy }),
  };
};

/** The stack a new rule belongs to: the one its name starts with, or the only one running. */
const ownerOf = (backends: readonly RulesBackend[], name: string) =>
  backends.find((b) => name.startsWith(`${b.stackName}-`)) ??
  (backends.length === 1 ? backends[0] : undefined);

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
    const rule = rules.find((r) => r.rule.name === name);
    if (!rule)
      fail(
        res,
        400,
        'ResourceNotFoundException',
        `Rule ${name} does not exist on EventBus default.`,
      );
    return rule;
  };
  const invalid = (message: string) => fail(res, 400, 'ValidationException', message);
  switch (action) {
    case 'ListRules':
      return answer(res, {
        Rules: rules.filter((r) => r.rule.name.startsWith(input.NamePrefix ?? '')).map(ruleOf),
      });
    case 'DescribeRule': {
      const rule = named(input.Name);
      return rule && answer(res, { ...ruleOf(rule), CreatedBy: rule.backend.account });
    }
    case 'ListTargetsByRule': {
      const rule = named(input.Rule);
      return (
        rule && answer(res, { Targets: rule.rule.targets.map((t) => targetOf(rule.backend, t)) })
      );
    }
    case 'ListRuleNamesByTarget':
      return answer(res, {
        RuleNames: rules
          .filter((r) => r.rule.targets.some((t) => targetOf(r.backend, t).Arn === input.TargetArn))
          .map((r) => r.rule.name),
      });
    case 'EnableRule':
    case 'DisableRule': {
      const rule = named(input.Name);
      if (!rule) return;
      rule.backend.runner.setEnabled(rule.rule.name, action === 'EnableRule');
      return answer(res, {});
    }
    case 'PutRule': {
      const name = input.Name ?? '';
      if (!NAME.test(name))
        return invalid(`the rule name ${name} is not 1 to 64 of [.-_A-Za-z0-9]`);
      if (input.EventPattern !== undefined)
        return invalid('the onceflow local edge runs scheduled rules only, not an EventPattern');
      if (input.ScheduleExpression === undefined)
        return invalid('Parameter(s) ScheduleExpression or EventPattern must be specified.');
      const backend = rules.find((r) => r.rule.name === name)?.backend ?? ownerOf(backends, name);
      if (!backend)
        return invalid(
          `${backends.length} stacks run here: a new rule's name starts with its stack's (${backends.map((b) => `${b.stackName}-`).join(', ')})`,
        );
      try {
        backend.runner.putRule({
          name,
          expression: parseScheduleExpression(input.ScheduleExpression),
          enabled: input.State !== 'DISABLED',
          ...(input.Description === undefined ? {} : { description: input.Description }),
        });
      } catch (error) {
        if (error instanceof InvalidScheduleExpressionError) return invalid(error.message);
        throw error;
      }
      return answer(res, { RuleArn: arnOf(backend, name) });
    }
    case 'PutTargets':
    case 'RemoveTargets': {
      const rule = named(input.Rule);
      if (!rule) return;
      const entries = action === 'PutTargets' ? (input.Targets ?? []) : (input.Ids ?? []);
      if (entries.length === 0 || entries.length > ENTRIES_PER_REQUEST)
        return invalid(`${action} takes 1 to ${ENTRIES_PER_REQUEST} entries`);
      const { runner } = rule.backend;
      if (action === 'RemoveTargets') {
        runner.removeTargets(rule.rule.name, input.Ids ?? []);
        return answer(res, { FailedEntryCount: 0, FailedEntries: [] });
      }
      const read = (input.Targets ?? []).map((t) => ({ t, target: targetFrom(rule.backend, t) }));
      const good = read.flatMap((x) => (typeof x.target === 'string' ? [] : [x.target]));
      const ids = new Set([
        ...rule.rule.targets.map((t) => t.targetId),
        ...good.map((t) => t.targetId),
      ]);
      if (ids.size > TARGETS_PER_RULE)
        return fail(
          res,
          400,
          'LimitExceededException',
          `The requested resource exceeds the maximum number allowed (${TARGETS_PER_RULE} targets per rule).`,
        );
      runner.putTargets(rule.rule.name, good);
      const failed = read.flatMap(({ t, target }) =>
        typeof target === 'string'
          ? [{ TargetId: t.Id, ErrorCode: 'ValidationException', ErrorMessage: target }]
          : [],
      );
      return answer(res, { FailedEntryCount: failed.length, FailedEntries: failed });
    }
    case 'DeleteRule': {
      // Deleting a rule that is not there succeeds, as on AWS: the call can be repeated.
      const rule = rules.find((r) => r.rule.name === input.Name);
      if (rule && rule.rule.targets.length > 0)
        return invalid("Rule can't be deleted since it has targets.");
      rule?.backend.runner.deleteRule(rule.rule.name);
      return answer(res, {});
    }
    default:
      return fail(
        res,
        400,
        'UnknownOperationException',
        `the onceflow local edge serves EventBridge's ListRules, DescribeRule, ListTargetsByRule, ListRuleNamesByTarget, EnableRule, DisableRule, PutRule, PutTargets, RemoveTargets and DeleteRule for the running stacks' scheduled rules, not ${action}`,
      );
  }
};
