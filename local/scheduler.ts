/**
 * A template's EventBridge Scheduler schedules (`AWS::Scheduler::Schedule`) that invoke its
 * functions, read and run as Scheduler runs them:
 * - `rate(…)` every period from the schedule's `StartDate`, or from its creation, the first run
 *   at once; `cron(…)` in the schedule's `ScheduleExpressionTimezone` (UTC by default), across
 *   daylight saving time as Scheduler documents it (a wall time the clocks skip is not run that
 *   day, one they repeat runs once); `at(…)` once, at that wall time in that zone;
 * - only between `StartDate` and `EndDate`, and only while `State` is `ENABLED`;
 * - the target gets its `Input`, with Scheduler's context attributes filled in
 *   (`<aws.scheduler.schedule-arn>`, `…scheduled-time>`, `…execution-id>`, `…attempt-number>`),
 *   and is invoked asynchronously, so Lambda retries a failed run as the function's event invoke
 *   config says. A flexible time window runs at its start, which is within it.
 */
import { randomBytes } from 'node:crypto';
import type { AsyncInvocations, AsyncOutcome } from './async-invocations.ts';
import {
  InvalidScheduleExpressionError,
  instantsOfWall,
  nextCronIn,
  offsetAt,
  parseScheduleExpression,
  type ScheduleExpression,
  zoneClock,
} from './schedule-expression.ts';
import { asRecord, physicalName, type ResourceEntries, referencesOf } from './template.ts';

/** Scheduler's expressions: a rule's `rate` and `cron`, and `at` for a one-time schedule. */
export type SchedulerExpression =
  | ScheduleExpression
  | { readonly kind: 'at'; readonly text: string; readonly wallMs: number };

export interface LocalSchedulerSchedule {
  readonly logicalId: string;
  readonly name: string;
  readonly groupName: string;
  readonly arn: string;
  readonly functionLogicalId: string;
  readonly expression: SchedulerExpression;
  readonly timeZone: string;
  readonly startMs?: number;
  readonly endMs?: number;
  readonly enabled: boolean;
  /** The target's `Input`, context attributes not yet filled in; none: `{}`. */
  readonly input?: string;
  /** The target's `RoleArn`, the schedule's `FlexibleTimeWindow` and `Description`, as written. */
  readonly roleArn?: string;
  readonly flexibleTimeWindow?: Readonly<Record<string, unknown>>;
  readonly description?: string;
  /** When `UpdateSchedule` last replaced it (epoch ms); undefined: as created. */
  readonly modifiedAtMs?: number;
}

/** Reads Scheduler's expressions; throws InvalidScheduleExpressionError as CreateSchedule would. */
export const parseSchedulerExpression = (text: string): SchedulerExpression => {
  const at = /^at\((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\)$/.exec(text);
  if (at) {
    const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0] = at
      .slice(1)
      .map(Number);
    const wallMs = Date.UTC(year, month - 1, day, hour, minute, second);
    const t = new Date(wallMs);
    // Date.UTC rolls 2026-02-30 over into March: a time that does not exist is refused.
    if (
      t.getUTCMonth() !== month - 1 ||
      t.getUTCDate() !== day ||
      hour > 23 ||
      minute > 59 ||
      second > 59
    )
      throw new InvalidScheduleExpressionError(`Invalid Schedule Expression ${text}: no such time`);
    return { kind: 'at', text, wallMs };
  }
  // Scheduler takes `rate(1 minutes)` as readily as `rate(1 minute)`, where a rule does not.
  const rate = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(text);
  if (rate)
    return parseScheduleExpression(`rate(${rate[1]} ${rate[2]}${rate[1] === '1' ? '' : 's'})`);
  return parseScheduleExpression(text);
};

/**
 * The run of a schedule strictly after `afterMs`, or undefined when none is left. `createdAtMs`:
 * when the runtime created it (a rate schedule without a `StartDate` runs from then).
 */
export const nextSchedulerRun = (
  s: LocalSchedulerSchedule,
  afterMs: number,
  createdAtMs: number,
): number | undefined => {
  const zone = zoneClock(s.timeZone);
  if (!zone) return undefined;
  const from = Math.max(afterMs, (s.startMs ?? Number.NEGATIVE_INFINITY) - 1);
  let due: number | undefined;
  const e = s.expression;
  if (e.kind === 'at') {
    // A wall time the clocks skip is taken at the offset before the change.
    const seconds = e.wallMs % 60_000;
    const minute = e.wallMs - seconds;
    const at =
      (instantsOfWall(minute, zone)[0] ?? minute - offsetAt(minute - 86_400_000, zone)) + seconds;
    due = at > from ? at : undefined;
  } else if (e.kind === 'rate') {
    const first = s.startMs ?? createdAtMs;
    const periodMs = e.everySeconds * 1000;
    due = first + Math.max(0, Math.floor((from - first) / periodMs) + 1) * periodMs;
  } else due = nextCronIn(e.cron, from, zone);
  return due !== undefined && (s.endMs === undefined || due <= s.endMs) ? due : undefined;
};

/** The target's input for one run, Scheduler's context attributes filled in. */
export const schedulerInput = (
  s: LocalSchedulerSchedule,
  run: { readonly scheduledMs: number; readonly executionId: string },
): string =>
  (s.input ?? '{}')
    .replaceAll('<aws.scheduler.schedule-arn>', s.arn)
    .replaceAll(
      '<aws.scheduler.scheduled-time>',
      `${new Date(run.scheduledMs).toISOString().slice(0, 19)}Z`,
    )
    .replaceAll('<aws.scheduler.execution-id>', run.executionId)
    // Scheduler's delivery attempt: delivery to a local function never fails.
    .replaceAll('<aws.scheduler.attempt-number>', '1');

export interface SchedulerSchedules {
  readonly schedules: LocalSchedulerSchedule[];
  /** Schedules the runtime does not run, each with the reason. */
  readonly notRun: string[];
}

const dateMs = (value: unknown, what: string, id: string): number | undefined => {
  if (value === undefined) return undefined;
  const ms = Date.parse(String(value));
  if (Number.isNaN(ms))
    throw new Error(`schedule ${id} cannot be created: ${what} ${String(value)} is no date`);
  return ms;
};

/**
 * Every Scheduler schedule of the template: one that invokes one of `functionIds`, and a line
 * for each other (another target, which the runtime does not call). An invalid expression or
 * time zone throws, as CreateSchedule refuses it.
 */
export const schedulerSchedules = (
  resources: ResourceEntries,
  functionIds: readonly string[],
  o: {
    readonly stackName: string;
    readonly region: string;
    readonly account: string;
    readonly resolveValue: (value: unknown) => unknown;
  },
): SchedulerSchedules => {
  const schedules: LocalSchedulerSchedule[] = [];
  const notRun: string[] = [];
  for (const [id, r] of resources.filter(([, r]) => r.Type === 'AWS::Scheduler::Schedule')) {
    const p = asRecord(r.Properties);
    const target = asRecord(p.Target);
    const functionLogicalId = referencesOf(target.Arn).find((ref) => functionIds.includes(ref));
    if (!functionLogicalId) {
      // One invoking a function the runtime does not run is named with that function.
      const fnTarget = referencesOf(target.Arn).some((ref) =>
        resources.some(([rid, rr]) => rid === ref && rr.Type === 'AWS::Lambda::Function'),
      );
      if (!fnTarget)
        notRun.push(`${id}: a Scheduler schedule whose target is not one of the stack's functions`);
      continue;
    }
    const text = String(o.resolveValue(p.ScheduleExpression));
    const expression = parseSchedulerExpression(text);
    const timeZone = String(o.resolveValue(p.ScheduleExpressionTimezone ?? 'UTC'));
    if (!zoneClock(timeZone))
      throw new InvalidScheduleExpressionError(`Invalid ScheduleExpressionTimezone ${timeZone}`);
    const name = typeof p.Name === 'string' ? p.Name : physicalName(o.stackName, id, 64);
    const groupName = typeof p.GroupName === 'string' ? p.GroupName : 'default';
    const startMs = dateMs(o.resolveValue(p.StartDate), 'StartDate', id);
    const endMs = dateMs(o.resolveValue(p.EndDate), 'EndDate', id);
    schedules.push({
      logicalId: id,
      name,
      groupName,
      arn: `arn:aws:scheduler:${o.region}:${o.account}:schedule/${groupName}/${name}`,
      functionLogicalId,
      expression,
      timeZone,
      ...(startMs === undefined ? {} : { startMs }),
      ...(endMs === undefined ? {} : { endMs }),
      enabled: p.State === undefined || p.State === 'ENABLED',
      ...(target.Input === undefined ? {} : { input: String(o.resolveValue(target.Input)) }),
      ...(target.RoleArn === undefined ? {} : { roleArn: String(o.resolveValue(target.RoleArn)) }),
      ...(p.FlexibleTimeWindow === undefined
        ? {}
        : { flexibleTimeWindow: asRecord(p.FlexibleTimeWindow) }),
      ...(typeof p.Description === 'string' ? { description: p.Description } : {}),
    });
  }
  return { schedules, notRun };
};

export interface SchedulerRunnerOptions {
  readonly schedules: readonly LocalSchedulerSchedule[];
  /** The runtime's asynchronous invocations, whose timers the runs share. */
  readonly invocations: AsyncInvocations;
  readonly report?: (schedule: LocalSchedulerSchedule, outcome: AsyncOutcome) => void;
  /** Told when a run's input is not JSON: Lambda refuses it, and nothing runs. */
  readonly warn?: (message: string) => void;
}

export interface SchedulerRunner {
  /** The schedules as they run now. */
  schedules(): readonly LocalSchedulerSchedule[];
  /** When the runtime created them (a rate schedule without a start date runs from then). */
  readonly createdAtMs: number;
  /**
   * Replaces a schedule (by group and name), as `UpdateSchedule` does: its next run is the new
   * definition's, and a run the old one had planned does not happen.
   */
  update(next: LocalSchedulerSchedule): void;
}

const keyOf = (s: LocalSchedulerSchedule) => `${s.groupName}/${s.name}`;

/** Arms every enabled schedule; the runs stop when `invocations` do. */
export const startSchedulerRunner = (o: SchedulerRunnerOptions): SchedulerRunner => {
  const createdAtMs = Date.now();
  let current = [...o.schedules];
  /** Each schedule's definition count: a timer armed for an older one does nothing. */
  const generations = new Map<string, number>();
  const arm = (s: LocalSchedulerSchedule, afterMs: number) => {
    const generation = generations.get(keyOf(s)) ?? 0;
    const due = s.enabled ? nextSchedulerRun(s, afterMs, createdAtMs) : undefined;
    if (due === undefined) return;
    o.invocations.at(due, () => {
      if ((generations.get(keyOf(s)) ?? 0) !== generation) return;
      const input = schedulerInput(s, {
        scheduledMs: due,
        executionId: randomBytes(8).toString('hex'),
      });
      let event: unknown;
      try {
        event = JSON.parse(input);
      } catch {
        o.warn?.(`schedule ${s.name}: its input is not JSON, which Lambda refuses: ${input}`);
      }
      if (event !== undefined)
        o.invocations.enqueue(s.functionLogicalId, event, (outcome) => o.report?.(s, outcome));
      arm(s, due);
    });
  };
  for (const s of current) arm(s, createdAtMs - 1);
  return {
    schedules: () => current,
    createdAtMs,
    update: (next) => {
      generations.set(keyOf(next), (generations.get(keyOf(next)) ?? 0) + 1);
      current = current.map((s) => (keyOf(s) === keyOf(next) ? next : s));
      arm(next, Date.now());
    },
  };
};
