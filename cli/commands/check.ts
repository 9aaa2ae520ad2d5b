/**
 * `onceflow check`: whether the running pipeline still has the settings its guarantees rest on.
 * `cdk deploy` sets them all; what changes them is a hand edit during an incident (a trigger
 * recreated in the console without partial batch responses, a visibility timeout shortened, a
 * function's concurrency reserved at 0 as a kill switch), or a policy tool. Each finding says
 * what breaks. A failure can lose or strand messages: exit 1. A warning costs work, receives or
 * time, never correctness: exit 0.
 */

import {
  CloudFormationClient,
  CloudFormationServiceException,
  GetTemplateCommand,
  paginateListStackResources,
} from '@aws-sdk/client-cloudformation';
import {
  type EventSourceMappingConfiguration,
  GetFunctionConcurrencyCommand,
  GetFunctionConfigurationCommand,
  LambdaClient,
} from '@aws-sdk/client-lambda';
import {
  GetQueueAttributesCommand,
  type QueueAttributeName,
  QueueDoesNotExist,
} from '@aws-sdk/client-sqs';
import type { Command } from 'commander';
import * as v from 'valibot';
import { counted, terminalSafe } from '../../local/render.ts';
import { json, run, target } from '../program.ts';
import { CliError, type Target } from '../target.ts';
import { stackAlarms } from './alarms.ts';
import { ALARM_SUBJECT, deployedAlarms, foldAlarms, judgeAlarms } from './check-alarms.ts';
import { apply, repairClients } from './check-apply.ts';
import { type LiveStack, planRepairs, resolverFor } from './check-fixes.ts';
import {
  type Finding,
  type FunctionFacts,
  judgeCoalescing,
  judgeFunction,
  judgeQueue,
  judgeScheduled,
  judgeWiring,
  QUEUE_OUTPUTS,
  type QueueFacts,
  RedriveSchema,
  type Verdict,
} from './check-rules.ts';
import { FUNCTIONS, type FunctionKey, type QueueFunction } from './logs.ts';
import { checkTable } from './table.ts';
import { HELD, queueMappings, triggerReport } from './trigger.ts';

const ATTRIBUTES: QueueAttributeName[] = [
  'VisibilityTimeout',
  'MessageRetentionPeriod',
  'RedrivePolicy',
  'FifoQueue',
  'DelaySeconds',
];

const queueFacts = async (t: Target, fn: QueueFunction): Promise<QueueFacts> => {
  const o = QUEUE_OUTPUTS[fn];
  // Undefined: the queue does not exist, deleted by hand (a finding, not a failed check).
  const attributes = async (url: string) => {
    try {
      return (
        (
          await t.clients.sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ATTRIBUTES }),
          )
        ).Attributes ?? {}
      );
    } catch (error) {
      if (error instanceof QueueDoesNotExist) return undefined;
      throw error;
    }
  };
  const [found, foundDlq] = await Promise.all([
    attributes(t.output(o.queue)),
    attributes(t.output(o.dlq)),
  ]);
  const queue = found ?? {};
  const dlq = foundDlq ?? {};
  const redrive =
    queue.RedrivePolicy === undefined || queue.RedrivePolicy === ''
      ? undefined
      : v.parse(RedriveSchema, JSON.parse(queue.RedrivePolicy));
  return {
    visibilityTimeoutS: Number(queue.VisibilityTimeout ?? 30),
    retentionS: Number(queue.MessageRetentionPeriod ?? 345_600),
    fifo: queue.FifoQueue === 'true',
    delaySeconds: Number(queue.DelaySeconds ?? 0),
    ...(redrive ? { redrive } : {}),
    dlqArn: t.output(o.dlqArn),
    dlqRetentionS: Number(dlq.MessageRetentionPeriod ?? 345_600),
    ...(found ? {} : { queueMissing: true }),
    ...(foundDlq ? {} : { dlqMissing: true }),
  };
};

const functionFacts = async (
  t: Target,
  lambda: LambdaClient,
  fn: FunctionKey,
  mappings: () => Promise<EventSourceMappingConfiguration[]>,
): Promise<FunctionFacts> => {
  const FunctionName = t.output(FUNCTIONS[fn]);
  const [config, concurrency, found] = await Promise.all([
    lambda.send(new GetFunctionConfigurationCommand({ FunctionName })),
    lambda.send(new GetFunctionConcurrencyCommand({ FunctionName })),
    mappings(),
  ]);
  const reserved = concurrency.ReservedConcurrentExecutions;
  return {
    ...(config.FunctionArn === undefined ? {} : { arn: config.FunctionArn }),
    timeoutS: config.Timeout ?? 3,
    environment: config.Environment?.Variables ?? {},
    ...(reserved === undefined ? {} : { reservedConcurrency: reserved }),
    mappings: found,
  };
};

/**
 * Every finding on the target's stack (its queues, triggers, functions, alarms and table), and the live
 * settings they judged. With `fixTable`, the table's TTL and point-in-time recovery are turned on.
 */
export const checkPipeline = async (
  t: Target,
  fixTable = false,
): Promise<{ findings: Finding[]; live: LiveStack }> => {
  const lambda = new LambdaClient(t.clientConfig ?? { region: t.region });
  const read = async (fn: QueueFunction) => {
    const [queue, facts] = await Promise.all([
      queueFacts(t, fn),
      functionFacts(t, lambda, fn, () => queueMappings(t, lambda, fn)),
    ]);
    return {
      queue,
      facts,
      findings: [...judgeQueue(QUEUE_OUTPUTS[fn].name, queue, facts), ...judgeFunction(fn, facts)],
    };
  };
  const [ingest, aggregate] = await Promise.all([read('ingest'), read('aggregate')]);
  const shared = { TABLE_NAME: t.output('TableName'), BUCKET_NAME: t.output('BucketName') };
  const perQueue = [
    ...ingest.findings,
    judgeWiring('ingest', ingest.facts.environment, {
      ...shared,
      AGGREGATE_QUEUE_URL: t.output('AggregateQueueUrl'),
    }),
    ...aggregate.findings,
    judgeWiring('aggregate', aggregate.facts.environment, shared),
    ...judgeCoalescing(aggregate.queue, ingest.facts),
  ];
  const [finalize, watch, triggers, alarms] = await Promise.all([
    functionFacts(t, lambda, 'finalize', async () => []),
    functionFacts(t, lambda, 'watch', async () => []),
    triggerReport(t),
    // A role without CloudWatch's read permissions still gets the rest of the checks.
    stackAlarms(t).catch((error: unknown) => {
      if (!(error instanceof Error)) throw error;
      return `not read (${error.name}: ${error.message})`;
    }),
  ]);
  const table = t.output('TableName');
  const live: LiveStack = {
    outputs: t.outputs,
    queues: { ingest: ingest.queue, aggregate: aggregate.queue },
    functions: { ingest: ingest.facts, aggregate: aggregate.facts, finalize, watch },
    triggers: triggers.states,
    ...(typeof alarms === 'string' ? {} : { alarms }),
  };
  const findings: Finding[] = [
    ...perQueue,
    judgeWiring('finalize', finalize.environment, shared),
    ...judgeScheduled('finalize', triggers.states.finalize, finalize, HELD.finalize),
    judgeWiring('watch', watch.environment, { TABLE_NAME: table }),
    ...judgeScheduled('watch', triggers.states.watch, watch, HELD.watch),
    ...(typeof alarms === 'string'
      ? [{ subject: ALARM_SUBJECT, name: 'alarms', verdict: 'warn' as const, detail: alarms }]
      : judgeAlarms(alarms, await alarmDefinitions(t, live))),
    ...(await checkTable(t, table, fixTable)).map(
      (c): Finding => ({
        subject: 'table',
        name: c.name,
        verdict: c.ok ? 'ok' : 'fail',
        detail: c.detail,
      }),
    ),
  ];
  return { findings, live };
};

/**
 * The deployed template, and each resource's physical id by logical id, from CloudFormation (the
 * local edge answers `GetTemplate` and `ListStackResources` too).
 */
const deployed = async (
  t: Target,
): Promise<{ template: unknown; resources: Record<string, string> }> => {
  const cloudFormation = new CloudFormationClient(t.clientConfig ?? { region: t.region });
  const { TemplateBody } = await cloudFormation.send(
    new GetTemplateCommand({ StackName: t.stackName, TemplateStage: 'Original' }),
  );
  const resources: Record<string, string> = {};
  for await (const page of paginateListStackResources(
    { client: cloudFormation },
    { StackName: t.stackName },
  ))
    for (const r of page.StackResourceSummaries ?? [])
      if (r.LogicalResourceId && r.PhysicalResourceId)
        resources[r.LogicalResourceId] = r.PhysicalResourceId;
  try {
    return { template: JSON.parse(TemplateBody ?? ''), resources };
  } catch (error) {
    throw new CliError(`${t.stackName}'s deployed template is not JSON, as CDK deploys it`, {
      cause: error,
    });
  }
};

/**
 * The deployed template's alarms, resolved, to tell one changed by hand; undefined (and no such
 * comparison) where the template cannot be read.
 */
const alarmDefinitions = async (t: Target, live: LiveStack) => {
  try {
    const { template, resources } = await deployed(t);
    const { template: parsed, resolve } = resolverFor(template, { ...live, resources });
    return deployedAlarms(parsed, resolve);
  } catch (error) {
    // A role without cloudformation:GetTemplate still gets every other judgement.
    if (error instanceof CloudFormationServiceException) return undefined;
    throw error;
  }
};

/**
 * `--fix`: puts each flagged setting back as the deployed template sets it, one call at a time,
 * and says what it left and why. Returns the changes made.
 */
const fix = async (
  t: Target,
  checked: Awaited<ReturnType<typeof checkPipeline>>,
  dryRun: boolean,
) => {
  const { template, resources } = await deployed(t);
  const { repairs, left } = planRepairs(template, { ...checked.live, resources }, checked.findings);
  const clients = repairClients(t);
  const verb = dryRun ? 'would put back' : 'put back';
  for (const [done, repair] of repairs.entries()) {
    try {
      if (!dryRun) await apply(t, clients, repair);
    } catch (error) {
      // Said before the error: which changes were made, and which one failed.
      throw new CliError(
        `${repair.subject}, ${repair.name} not put back (${done} of ${repairs.length} put back before it): ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    console.error(terminalSafe(`↺ ${verb} ${repair.subject}, ${repair.name}: ${repair.change}`));
  }
  for (const l of left) console.error(terminalSafe(`· left ${l.subject}, ${l.name}: ${l.reason}`));
  return { repairs, left };
};

const MARK: Record<Verdict, string> = { ok: '✓', warn: '!', fail: '✗' };

export const register = (program: Command): void => {
  program
    .command('check')
    .description(
      'whether the running stack still has the settings its guarantees rest on (partial batch responses, dead-letter queues, visibility timeouts, concurrency, the table): exit 1 on a failure',
    )
    .option(
      '--json',
      'print the findings as JSON: [{subject, name, verdict, detail}]; with --fix, {putBack (wouldPutBack with --dry-run): [{subject, name, change}], left: [{subject, name, reason}], findings}',
    )
    .option(
      '--fix',
      "put each flagged setting back as the deployed template sets it (CloudFormation's GetTemplate), then check again; a pause is left as it is",
    )
    .option('--dry-run', 'with --fix: say what it would put back, change nothing')
    .addHelpText(
      'after',
      '\nExamples:\n  npx onceflow --target aws --stack-name onceflow-prod check\n  npx onceflow --target aws --stack-name onceflow-prod check --fix --dry-run',
    )
    .action(
      run(async (o: { json?: boolean; fix?: boolean; dryRun?: boolean }) => {
        if (o.dryRun && !o.fix) throw new CliError('--dry-run goes with --fix');
        const t = await target();
        let checked = await checkPipeline(t);
        let done: Awaited<ReturnType<typeof fix>> = { repairs: [], left: [] };
        if (o.fix && checked.findings.some((f) => f.verdict !== 'ok')) {
          done = await fix(t, checked, o.dryRun === true);
          if (!o.dryRun) checked = await checkPipeline(t, true);
          console.error(
            `${counted(done.repairs.length, 'setting')} ${o.dryRun ? 'to put back' : 'put back'}, ${done.left.length} left`,
          );
        }
        const { findings } = checked;
        // With --fix, what changed (or would) and what was left come with the findings after it.
        if (o.json && o.fix)
          json({
            [o.dryRun ? 'wouldPutBack' : 'putBack']: done.repairs.map(
              ({ subject, name, change }) => ({ subject, name, change }),
            ),
            left: done.left,
            findings,
          });
        else if (o.json) json(findings);
        else
          for (const f of foldAlarms(findings))
            console.log(terminalSafe(`${MARK[f.verdict]} ${f.subject}, ${f.name}: ${f.detail}`));
        const failed = findings.filter((f) => f.verdict === 'fail').length;
        const warned = findings.filter((f) => f.verdict === 'warn').length;
        console.error(
          `${t.stackName}: ${counted(findings.length, 'check')}, ${failed} failed, ${counted(warned, 'warning')}`,
        );
        if (!o.fix && failed + warned > 0)
          console.error(
            '`onceflow check --fix --dry-run` shows what the deployed template would put back',
          );
        return failed > 0 ? 1 : 0;
      }),
    );
};
