/**
 * `onceflow check`: whether the running pipeline still has the settings its guarantees rest on.
 * `cdk deploy` sets them all; what changes them is a hand edit during an incident (a trigger
 * recreated in the console without partial batch responses, a visibility timeout shortened, a
 * function's concurrency reserved at 0 as a kill switch), or a policy tool. Each finding says
 * what breaks. A failure can lose or strand messages: exit 1. A warning costs work, receives or
 * time, never correctness: exit 0.
 */

import {
  type EventSourceMappingConfiguration,
  GetFunctionConcurrencyCommand,
  GetFunctionConfigurationCommand,
  LambdaClient,
} from '@aws-sdk/client-lambda';
import { GetQueueAttributesCommand, type QueueAttributeName } from '@aws-sdk/client-sqs';
import type { Command } from 'commander';
import * as v from 'valibot';
import { counted, terminalSafe } from '../../local/render.ts';
import { json, run, target } from '../program.ts';
import type { Target } from '../target.ts';
import {
  type Finding,
  type FunctionFacts,
  judgeCoalescing,
  judgeFunction,
  judgeQueue,
  judgeWiring,
  type QueueFacts,
  type Verdict,
} from './check-rules.ts';
import { FUNCTIONS, type FunctionKey, type QueueFunction } from './logs.ts';
import { checkTable } from './table.ts';
import { queueMappings, triggerReport } from './trigger.ts';

const ATTRIBUTES: QueueAttributeName[] = [
  'VisibilityTimeout',
  'MessageRetentionPeriod',
  'RedrivePolicy',
  'FifoQueue',
  'DelaySeconds',
];

/** SQS gives the RedrivePolicy as JSON text: read through a schema, numbers or strings. */
const RedriveSchema = v.object({
  deadLetterTargetArn: v.string(),
  maxReceiveCount: v.pipe(v.union([v.number(), v.string()]), v.transform(Number)),
});

const QUEUE_OUTPUTS = {
  ingest: {
    name: 'orders queue',
    queue: 'OrdersQueueUrl',
    dlq: 'OrdersDlqUrl',
    dlqArn: 'OrdersDlqArn',
  },
  aggregate: {
    name: 'aggregate queue',
    queue: 'AggregateQueueUrl',
    dlq: 'AggregateDlqUrl',
    dlqArn: 'AggregateDlqArn',
  },
} as const;

const queueFacts = async (t: Target, fn: QueueFunction): Promise<QueueFacts> => {
  const o = QUEUE_OUTPUTS[fn];
  const attributes = async (url: string) =>
    (
      await t.clients.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ATTRIBUTES }),
      )
    ).Attributes ?? {};
  const [queue, dlq] = await Promise.all([
    attributes(t.output(o.queue)),
    attributes(t.output(o.dlq)),
  ]);
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
    timeoutS: config.Timeout ?? 3,
    environment: config.Environment?.Variables ?? {},
    ...(reserved === undefined ? {} : { reservedConcurrency: reserved }),
    mappings: found,
  };
};

/** Every finding on the target's stack: its queues, triggers, functions and table. */
export const checkPipeline = async (t: Target): Promise<Finding[]> => {
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
  const [finalize, triggers] = await Promise.all([
    functionFacts(t, lambda, 'finalize', async () => []),
    triggerReport(t),
  ]);
  const schedule = triggers.states.finalize;
  const table = t.output('TableName');
  return [
    ...perQueue,
    judgeWiring('finalize', finalize.environment, shared),
    schedule === 'Enabled'
      ? { subject: 'finalize', name: 'schedule', verdict: 'ok', detail: 'Enabled' }
      : {
          subject: 'finalize',
          name: 'schedule',
          verdict: 'warn',
          detail: `${schedule}: no hour becomes final until \`onceflow resume finalize\``,
        },
    finalize.reservedConcurrency === 0
      ? {
          subject: 'finalize',
          name: 'reserved concurrency',
          verdict: 'warn',
          detail: '0: no hour is finalized (`onceflow pause finalize` says so in `status`)',
        }
      : {
          subject: 'finalize',
          name: 'reserved concurrency',
          verdict: 'ok',
          detail:
            finalize.reservedConcurrency === undefined
              ? 'none reserved'
              : String(finalize.reservedConcurrency),
        },
    ...(await checkTable(t, table, false)).map(
      (c): Finding => ({
        subject: 'table',
        name: c.name,
        verdict: c.ok ? 'ok' : 'fail',
        detail: c.detail,
      }),
    ),
  ];
};

const MARK: Record<Verdict, string> = { ok: '✓', warn: '!', fail: '✗' };

export const register = (program: Command): void => {
  program
    .command('check')
    .description(
      'whether the running stack still has the settings its guarantees rest on (partial batch responses, dead-letter queues, visibility timeouts, concurrency, the table): exit 1 on a failure',
    )
    .option('--json', 'print the findings as JSON: [{subject, name, verdict, detail}]')
    .addHelpText(
      'after',
      '\nExample:\n  npx onceflow --target aws --stack-name onceflow-prod check',
    )
    .action(
      run(async (o: { json?: boolean }) => {
        const t = await target();
        const findings = await checkPipeline(t);
        if (o.json) json(findings);
        else
          for (const f of findings)
            console.log(terminalSafe(`${MARK[f.verdict]} ${f.subject}, ${f.name}: ${f.detail}`));
        const failed = findings.filter((f) => f.verdict === 'fail').length;
        const warned = findings.filter((f) => f.verdict === 'warn').length;
        console.error(
          `${t.stackName}: ${counted(findings.length, 'check')}, ${failed} failed, ${counted(warned, 'warning')}`,
        );
        return failed > 0 ? 1 : 0;
      }),
    );
};
