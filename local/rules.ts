/**
 * A template's EventBridge rules that run its functions on a schedule, read as EventBridge runs
 * them: the schedule expression (`rate(…)` or `cron(…)`, refused as `PutRule` would refuse it)
 * and what each target is sent (the scheduled event, a constant `Input`, or the part of the
 * event an `InputPath` names).
 */
import { parseScheduleExpression, type ScheduleExpression } from './schedule-expression.ts';
import { asRecord, type ResourceEntries, referencesOf } from './template.ts';

/** What a rule's target is sent on each run. */
export type TargetInput =
  | { readonly kind: 'event' }
  | { readonly kind: 'constant'; readonly value: unknown }
  /** `InputPath`: object keys and array indices from the event's root. */
  | { readonly kind: 'path'; readonly path: readonly (string | number)[] };

/** One (rule, function target) pair. */
export interface LocalSchedule {
  readonly logicalId: string;
  /** The rule's name: its `Name`, or `<stack>-<logicalId>` as other local names. */
  readonly ruleName: string;
  readonly functionLogicalId: string;
  readonly expression: ScheduleExpression;
  readonly input: TargetInput;
  /** The rule's `State` in the template (`EnableRule` and `DisableRule` change it while running). */
  readonly enabled: boolean;
  readonly description?: string;
  /** The target's `Id` within its rule. */
  readonly targetId: string;
  /**
   * The target's `RetryPolicy`, as written: EventBridge's retries of its delivery to Lambda
   * (which never fails locally); Lambda's own retries of a failed run are the function's.
   */
  readonly retryPolicy?: Readonly<Record<string, unknown>>;
}

export interface ScheduledRules {
  readonly schedules: LocalSchedule[];
  /** Rules targeting a function that the local runtime does not run, each with the reason. */
  readonly notRun: string[];
}

/** `$`, `$.detail`, `$.detail.items[0]`: EventBridge's dot notation with array indices. */
export const inputPath = (text: string): (string | number)[] | undefined => {
  if (!text.startsWith('$')) return undefined;
  const path: (string | number)[] = [];
  for (const m of text.slice(1).matchAll(/\.([\w-]+)|\[(\d+)\]|(.)/g)) {
    if (m[3] !== undefined) return undefined;
    path.push(m[1] ?? Number(m[2]));
  }
  return path;
};

/** The value at `path` in `event`, or undefined. */
export const atPath = (event: unknown, path: readonly (string | number)[]): unknown =>
  path.reduce<unknown>(
    (value, key) =>
      typeof value === 'object' && value !== null
        ? (value as Record<string | number, unknown>)[key]
        : undefined,
    event,
  );

/** What the target is sent, or why the local runtime cannot send it. */
const targetInput = (
  target: Record<string, unknown>,
  resolveValue: (value: unknown) => unknown,
): TargetInput | string => {
  if (target.InputTransformer !== undefined) return 'an input transformer';
  const text = (value: unknown) => {
    try {
      return String(resolveValue(value));
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  };
  if (target.Input !== undefined) {
    const input = text(target.Input);
    if (input instanceof Error) return `an Input that does not resolve locally (${input.message})`;
    try {
      return { kind: 'constant', value: JSON.parse(input) };
    } catch {
      return `an Input that is not JSON (${input.slice(0, 40)})`;
    }
  }
  if (target.InputPath !== undefined) {
    const pathText = text(target.InputPath);
    const path = typeof pathText === 'string' ? inputPath(pathText) : undefined;
    return path
      ? { kind: 'path', path }
      : `the InputPath ${String(pathText)} (dot notation and indices only)`;
  }
  return { kind: 'event' };
};

/**
 * Every rule targeting one of `functionIds`: one schedule per (rule, function) that the local
 * runtime runs, and a line for each it does not (an event pattern rule, an input transformer).
 * An invalid schedule expression throws, as `PutRule` refuses it.
 */
export const scheduledRules = (
  resources: ResourceEntries,
  functionIds: readonly string[],
  options: { readonly stackName: string; readonly resolveValue: (value: unknown) => unknown },
): ScheduledRules => {
  const schedules: LocalSchedule[] = [];
  const notRun: string[] = [];
  for (const [id, resource] of resources.filter(([, r]) => r.Type === 'AWS::Events::Rule')) {
    const p = asRecord(resource.Properties);
    const targets = (Array.isArray(p.Targets) ? p.Targets : []).map(asRecord).flatMap((t) => {
      const functionLogicalId = referencesOf(t.Arn).find((r) => functionIds.includes(r));
      return functionLogicalId ? [{ target: t, functionLogicalId }] : [];
    });
    if (targets.length === 0) continue;
    if (p.ScheduleExpression === undefined) {
      notRun.push(`${id}: an event pattern rule (only schedules run locally)`);
      continue;
    }
    const expression = parseScheduleExpression(String(options.resolveValue(p.ScheduleExpression)));
    for (const { target, functionLogicalId } of targets) {
      const input = targetInput(target, options.resolveValue);
      if (typeof input === 'string') {
        notRun.push(`${id} → ${functionLogicalId}: ${input}`);
        continue;
      }
      schedules.push({
        logicalId: id,
        ruleName: typeof p.Name === 'string' ? p.Name : `${options.stackName}-${id}`.slice(0, 64),
        functionLogicalId,
        expression,
        input,
        enabled: p.State === undefined || p.State === 'ENABLED',
        ...(typeof p.Description === 'string' ? { description: p.Description } : {}),
        targetId: String(target.Id ?? functionLogicalId),
        ...(target.RetryPolicy === undefined ? {} : { retryPolicy: asRecord(target.RetryPolicy) }),
      });
    }
  }
  return { schedules, notRun };
};
