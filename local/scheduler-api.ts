/**
 * EventBridge Scheduler's API for the running stacks' schedules, on the local edge (REST JSON,
 * signed for `scheduler`): `ListSchedules`, `GetSchedule`, and `UpdateSchedule`, which replaces a
 * schedule's definition as on AWS (`aws scheduler update-schedule … --state DISABLED` holds it).
 * A schedule must keep invoking one of its stack's functions. Anything else is refused by name.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import { readJsonBody } from './http.ts';
import { InvalidScheduleExpressionError, zoneClock } from './schedule-expression.ts';
import {
  type LocalSchedulerSchedule,
  parseSchedulerExpression,
  type SchedulerRunner,
} from './scheduler.ts';

/** What a running stack lends the edge: its Scheduler schedules and a way to replace one. */
export interface SchedulerBackend {
  readonly runner: SchedulerRunner;
  /** The ARN of one of the stack's functions, by logical id, and the reverse. */
  functionArn(functionLogicalId: string): string | undefined;
  functionOf(arn: string): string | undefined;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
const fail = (res: ServerResponse, status: number, type: string, message: string) => {
  res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type });
  res.end(JSON.stringify({ Message: message }));
};

/** Scheduler's timestamps: epoch seconds in JSON, as its SDKs write and read them. */
const seconds = (ms: number) => ms / 1000;
const Timestamp = v.union([v.number(), v.string()]);
const msOf = (value: number | string) =>
  typeof value === 'number' ? value * 1000 : Date.parse(value);

const UpdateSchema = v.object({
  GroupName: v.optional(v.string()),
  ScheduleExpression: v.string(),
  ScheduleExpressionTimezone: v.optional(v.string()),
  StartDate: v.optional(Timestamp),
  EndDate: v.optional(Timestamp),
  State: v.optional(v.picklist(['ENABLED', 'DISABLED'])),
  Description: v.optional(v.string()),
  FlexibleTimeWindow: v.record(v.string(), v.unknown()),
  Target: v.object({
    Arn: v.string(),
    RoleArn: v.optional(v.string()),
    Input: v.optional(v.string()),
  }),
});

export const answerScheduler = async (
  req: IncomingMessage,
  res: ServerResponse,
  backends: readonly SchedulerBackend[],
): Promise<void> => {
  const url = new URL(req.url ?? '/', 'http://edge');
  const [collection, rawName, extra] = url.pathname.split('/').filter(Boolean);
  const body = await readJsonBody(req);
  const all = backends.flatMap((backend) =>
    backend.runner.schedules().map((schedule) => ({ backend, schedule })),
  );
  const summary = ({ backend, schedule: s }: (typeof all)[number]) => ({
    Arn: s.arn,
    Name: s.name,
    GroupName: s.groupName,
    State: s.enabled ? 'ENABLED' : 'DISABLED',
    CreationDate: seconds(backend.runner.createdAtMs),
    LastModificationDate: seconds(s.modifiedAtMs ?? backend.runner.createdAtMs),
    Target: { Arn: backend.functionArn(s.functionLogicalId) },
  });
  if (
    collection !== 'schedules' ||
    extra !== undefined ||
    (rawName === undefined && req.method !== 'GET')
  )
    return fail(
      res,
      400,
      'ValidationException',
      `the onceflow local edge serves EventBridge Scheduler's ListSchedules, GetSchedule and UpdateSchedule for the running stacks' schedules, not ${req.method} ${url.pathname}`,
    );
  if (rawName === undefined) {
    const group = url.searchParams.get('ScheduleGroup');
    const prefix = url.searchParams.get('NamePrefix') ?? '';
    const state = url.searchParams.get('State');
    const Schedules = all
      .map(summary)
      .filter((s) => (group === null || s.GroupName === group) && s.Name.startsWith(prefix))
      .filter((s) => state === null || s.State === state)
      .sort((a, b) => a.Name.localeCompare(b.Name));
    return json(res, 200, { Schedules });
  }
  const name = decodeURIComponent(rawName);
  const update = req.method === 'PUT' ? v.safeParse(UpdateSchema, body?.value) : undefined;
  const group =
    (update?.success ? update.output.GroupName : url.searchParams.get('groupName')) ?? 'default';
  const found = all.find(({ schedule: s }) => s.name === name && s.groupName === group);
  if (!found)
    return fail(res, 404, 'ResourceNotFoundException', `Schedule ${name} does not exist.`);
  const { backend, schedule: s } = found;
  if (req.method === 'GET')
    return json(res, 200, {
      ...summary(found),
      ScheduleExpression: s.expression.text,
      ScheduleExpressionTimezone: s.timeZone,
      ...(s.startMs === undefined ? {} : { StartDate: seconds(s.startMs) }),
      ...(s.endMs === undefined ? {} : { EndDate: seconds(s.endMs) }),
      ...(s.description === undefined ? {} : { Description: s.description }),
      FlexibleTimeWindow: s.flexibleTimeWindow ?? { Mode: 'OFF' },
      ActionAfterCompletion: 'NONE',
      Target: {
        Arn: backend.functionArn(s.functionLogicalId),
        ...(s.roleArn === undefined ? {} : { RoleArn: s.roleArn }),
        ...(s.input === undefined ? {} : { Input: s.input }),
      },
    });
  if (!update?.success)
    return fail(
      res,
      400,
      'ValidationException',
      update
        ? update.issues[0].message
        : `the local edge does not serve ${req.method} of a schedule`,
    );
  const u = update.output;
  const functionLogicalId = backend.functionOf(u.Target.Arn);
  if (!functionLogicalId)
    return fail(
      res,
      400,
      'ValidationException',
      `the local runtime runs schedules that invoke its stack's functions; ${u.Target.Arn} is not one`,
    );
  let expression: LocalSchedulerSchedule['expression'];
  try {
    expression = parseSchedulerExpression(u.ScheduleExpression);
  } catch (error) {
    if (!(error instanceof InvalidScheduleExpressionError)) throw error;
    return fail(res, 400, 'ValidationException', error.message);
  }
  const timeZone = u.ScheduleExpressionTimezone ?? 'UTC';
  if (!zoneClock(timeZone))
    return fail(res, 400, 'ValidationException', `Invalid ScheduleExpressionTimezone ${timeZone}`);
  backend.runner.update({
    logicalId: s.logicalId,
    name: s.name,
    groupName: s.groupName,
    arn: s.arn,
    functionLogicalId,
    expression,
    timeZone,
    ...(u.StartDate === undefined ? {} : { startMs: msOf(u.StartDate) }),
    ...(u.EndDate === undefined ? {} : { endMs: msOf(u.EndDate) }),
    enabled: u.State !== 'DISABLED',
    ...(u.Target.Input === undefined ? {} : { input: u.Target.Input }),
    ...(u.Target.RoleArn === undefined ? {} : { roleArn: u.Target.RoleArn }),
    flexibleTimeWindow: u.FlexibleTimeWindow,
    ...(u.Description === undefined ? {} : { description: u.Description }),
    modifiedAtMs: Date.now(),
  });
  return json(res, 200, { ScheduleArn: s.arn });
};
