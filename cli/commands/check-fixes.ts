/**
 * What `onceflow check --fix` puts back: for each setting `check` flagged, the value the deployed
 * template gives it, when the running stack has drifted from it. A hand edit is never undone by
 * `cdk deploy` alone: CloudFormation updates a resource only when its template changes.
 *
 * Pure: the deployed template (CloudFormation's `GetTemplate`), the stack's outputs and the live
 * settings come in; the changes to make, and why each other flagged setting is left, go out. The
 * template's references (`Ref`, `Fn::GetAtt`) are resolved through the stack's outputs, which
 * CloudFormation has already resolved: an output whose template value is the same expression
 * gives its value. What no output resolves is not guessed at, and left with that reason.
 */
import * as v from 'valibot';
import { CliError } from '../target.ts';
import { alarmDrifts } from './check-alarms.ts';
import {
  type Drift,
  functionDrifts,
  type LiveStack,
  queueDrifts,
  type Repair,
} from './check-drifts.ts';
import { deletedQueueDrifts } from './check-queues.ts';
import { DELETED, type Finding } from './check-rules.ts';
import { scheduleDrifts } from './check-schedules.ts';
import { referenced, resolver, TemplateSchema } from './check-template.ts';
import { FUNCTION_KEYS, FUNCTIONS } from './logs.ts';

export type { LiveStack, Repair, RepairRequest } from './check-drifts.ts';

/** A flagged setting `--fix` does not change, and why. */
export interface Left {
  readonly subject: string;
  readonly name: string;
  readonly reason: string;
}

/** Why a flagged setting with nothing to put back stays as it is. */
const leftBecause = (f: Finding, drifts: readonly Drift[]): string => {
  const answering = drifts.filter((d) =>
    d.answers.some((a) => a.subject === f.subject && a.name === f.name),
  );
  // Any of them that could not be resolved says why, before what else answers the same finding.
  const unresolvable = answering.find((d) => d.unresolvable)?.unresolvable;
  if (unresolvable) return `not put back: ${unresolvable}`;
  const drift = answering[0];
  if (f.detail.includes(DELETED))
    return 'deleted, and the deployed template has nothing to create it again from';
  if (f.name === 'schedule' && f.detail.startsWith('no rule'))
    return 'the deployed template has no scheduled rule for it';
  if (f.name === 'trigger' || f.name === 'schedule')
    return `paused, perhaps on purpose: \`onceflow resume ${f.subject}\` when it should run`;
  if (f.subject === 'table')
    return 'the table’s own setting: `onceflow table check --fix` turns on TTL and point-in-time recovery; a key schema cannot change';
  if (drift) return 'as deployed: the template sets it so; change the stack’s props and deploy';
  return 'not a setting the template sets';
};

/**
 * The deployed template, validated, and how its references resolve through what the running
 * stack says of itself: its outputs, its resources' physical ids and its functions' ARNs.
 */
export const resolverFor = (deployedTemplate: unknown, live: LiveStack) => {
  const parsed = v.safeParse(TemplateSchema, deployedTemplate);
  if (!parsed.success)
    throw new CliError(
      `the deployed template is not CloudFormation's shape: ${v.summarize(parsed.issues)}`,
    );
  const template = parsed.output;
  // A rule's target names its function by `Fn::GetAtt [id, Arn]`: the ARN Lambda gave.
  const arns = Object.fromEntries(
    FUNCTION_KEYS.flatMap((fn) => {
      const id = referenced(template, FUNCTIONS[fn]);
      const arn = live.functions[fn].arn;
      return id === undefined || arn === undefined ? [] : [[id, arn]];
    }),
  );
  const resolve = resolver(template, {
    outputs: live.outputs,
    arns,
    ...(live.resources ? { resources: live.resources } : {}),
  });
  return { template, resolve };
};

/**
 * The changes that put each flagged setting back as the deployed template sets it, and each
 * flagged setting left as it is, with why. Only what `check` flagged is changed: a setting that
 * differs from the template but is judged fine (a visibility timeout raised by hand) stays.
 */
export const planRepairs = (
  deployedTemplate: unknown,
  live: LiveStack,
  findings: readonly Finding[],
): { readonly repairs: readonly Repair[]; readonly left: readonly Left[] } => {
  const { template, resolve } = resolverFor(deployedTemplate, live);
  const drifts = [
    ...alarmDrifts(template, live, resolve),
    ...queueDrifts(template, live, resolve, 'ingest'),
    ...queueDrifts(template, live, resolve, 'aggregate'),
    ...deletedQueueDrifts(template, live, resolve, 'ingest'),
    ...deletedQueueDrifts(template, live, resolve, 'aggregate'),
    ...FUNCTION_KEYS.flatMap((fn) => [
      ...functionDrifts(template, live, resolve, fn),
      ...scheduleDrifts(template, live, resolve, fn),
    ]),
  ];
  const flagged = findings.filter((f) => f.verdict !== 'ok');
  const isFlagged = (a: { subject: string; name: string }) =>
    flagged.some((f) => f.subject === a.subject && f.name === a.name);
  const repairs = drifts.flatMap((d) => (d.repair && d.answers.some(isFlagged) ? [d.repair] : []));
  const answered = (f: Finding) =>
    drifts.some(
      (d) => d.repair && d.answers.some((a) => a.subject === f.subject && a.name === f.name),
    );
  const left = flagged
    .filter((f) => !answered(f))
    .map((f) => ({ subject: f.subject, name: f.name, reason: leftBecause(f, drifts) }));
  return { repairs, left };
};
