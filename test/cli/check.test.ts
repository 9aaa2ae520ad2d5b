/**
 * `onceflow check` on a local stack: what drifted from the template, what a deleted queue breaks,
 * and what `--fix` puts back.
 */
import {
  DeleteRuleCommand,
  EventBridgeClient,
  ListRuleNamesByTargetCommand,
  ListRulesCommand,
  ListTargetsByRuleCommand,
  RemoveTargetsCommand,
} from '@aws-sdk/client-eventbridge';
import {
  DeleteEventSourceMappingCommand,
  GetFunctionConfigurationCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
  PutFunctionConcurrencyCommand,
  UpdateEventSourceMappingCommand,
  UpdateFunctionConfigurationCommand,
} from '@aws-sdk/client-lambda';
import {
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../local/emulators.ts';
import { onceflow } from '../support/cli.ts';
import { essence, SEED, useCliStacks } from '../support/cli-stack.ts';
import { DEADLINE_S } from '../support/deadlines.ts';
import { expectedHourly, expectedOrders } from '../support/fixtures.ts';
import { parseJson } from '../support/json.ts';

const { stack } = useCliStacks();

describe('onceflow check', () => {
  it('checks the running stack, fails a trigger without partial batch responses, a reservation of 0, a coalescing queue without its delay and a function pointed at another table, warns of a short visibility timeout and a paused schedule, and puts back all but the pause with --fix', async () => {
    await using s = await stack();
    const healthy = await s.cli('check');
    expect(healthy.code, healthy.stdout).toBe(0);
    expect(healthy.stdout).toContain('✓ ingest, partial batch responses:');
    expect(healthy.stdout).toContain(
      "✓ ingest, wiring: TABLE_NAME, BUCKET_NAME, AGGREGATE_QUEUE_URL as the stack's outputs",
    );
    expect(healthy.stdout).toContain(
      "✓ aggregate queue, coalescing: delivery delay 2 s, at least ingest's 2 s window",
    );
    expect(healthy.stderr).toMatch(/: \d+ checks, 0 failed, 0 warnings/);

    // Hand edits during an incident, through Lambda's and SQS's own APIs.
    const lambda = new LambdaClient({
      endpoint: s.runtime.endpoint,
      region: s.runtime.region,
      credentials: LOCAL_CREDENTIALS,
    });
    const { EventSourceMappings: [mapping] = [] } = await lambda.send(
      new ListEventSourceMappingsCommand({ FunctionName: s.outputs.IngestFunctionName }),
    );
    await lambda.send(
      new UpdateEventSourceMappingCommand({ UUID: mapping?.UUID, FunctionResponseTypes: [] }),
    );
    await lambda.send(
      new PutFunctionConcurrencyCommand({
        FunctionName: s.outputs.AggregateFunctionName,
        ReservedConcurrentExecutions: 0,
      }),
    );
    await s.runtime.clients.sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: s.outputs.OrdersQueueUrl,
        Attributes: { VisibilityTimeout: '20' },
      }),
    );
    await s.runtime.clients.sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: s.outputs.AggregateQueueUrl,
        Attributes: { DelaySeconds: '0' },
      }),
    );
    const { Environment } = await lambda.send(
      new GetFunctionConfigurationCommand({ FunctionName: s.outputs.IngestFunctionName }),
    );
    const deployedEnvironment = Environment?.Variables ?? {};
    await lambda.send(
      new UpdateFunctionConfigurationCommand({
        FunctionName: s.outputs.IngestFunctionName,
        Environment: {
          Variables: {
            ...deployedEnvironment,
            TABLE_NAME: 'restored-table',
            POWERTOOLS_LOG_LEVEL: 'DEBUG',
          },
        },
      }),
    );
    expect((await s.cli('pause', 'finalize')).code).toBe(0);

    const drifted = await s.cli('check');
    expect(drifted.code).toBe(1);
    expect(drifted.stdout).toContain(
      `✗ ingest, partial batch responses: ${mapping?.UUID} lacks ReportBatchItemFailures`,
    );
    expect(drifted.stdout).toContain(
      '✗ aggregate, reserved concurrency: 0: every batch is throttled',
    );
    expect(drifted.stdout).toContain(
      "! orders queue, visibility timeout: 20 s, under the 180 s AWS advises (6 × the function's 30 s timeout): a batch still running reappears",
    );
    expect(drifted.stdout).toContain(
      "✗ aggregate queue, coalescing: delivery delay 0 s, under ingest's 2 s window",
    );
    expect(drifted.stdout).toContain(
      '! finalize, schedule: Disabled: no hour is finalized until `onceflow resume finalize`',
    );
    expect(drifted.stdout).toContain(
      `✗ ingest, wiring: TABLE_NAME is restored-table, not ${s.outputs.TableName}`,
    );
    expect(drifted.stderr).toMatch(/: \d+ checks, 4 failed, 2 warnings$/m);
    expect(drifted.stderr).toContain('`onceflow check --fix --dry-run` shows what');
    const FindingsSchema = v.array(
      v.object({ subject: v.string(), name: v.string(), verdict: v.string() }),
    );
    const flagged = async () =>
      parseJson(FindingsSchema, (await s.cli('check', '--json')).stdout).filter(
        (f) => f.verdict !== 'ok',
      );
    expect(await flagged()).toEqual([
      { subject: 'orders queue', name: 'visibility timeout', verdict: 'warn' },
      { subject: 'ingest', name: 'partial batch responses', verdict: 'fail' },
      { subject: 'ingest', name: 'wiring', verdict: 'fail' },
      { subject: 'aggregate', name: 'reserved concurrency', verdict: 'fail' },
      { subject: 'aggregate queue', name: 'coalescing', verdict: 'fail' },
      { subject: 'finalize', name: 'schedule', verdict: 'warn' },
    ]);

    // The plan first: nothing changes.
    const dryRun = await s.cli('check', '--fix', '--dry-run');
    expect(dryRun.code).toBe(1);
    expect(dryRun.stderr).toContain(
      '↺ would put back orders queue, visibility timeout: VisibilityTimeout 20 → 180',
    );
    expect(dryRun.stderr).toContain('5 settings to put back, 1 left');
    expect(await flagged()).toHaveLength(6);
    const plan = parseJson(
      v.object({
        wouldPutBack: v.array(v.object({ subject: v.string(), name: v.string() })),
        left: v.array(v.object({ subject: v.string(), name: v.string(), reason: v.string() })),
        findings: FindingsSchema,
      }),
      (await s.cli('check', '--fix', '--dry-run', '--json')).stdout,
    );
    expect(plan.wouldPutBack.map((r) => `${r.subject}, ${r.name}`)).toEqual([
      'orders queue, visibility timeout',
      'aggregate queue, coalescing',
      'ingest, wiring',
      'ingest, partial batch responses',
      'aggregate, reserved concurrency',
    ]);
    expect(plan.left.map((l) => `${l.subject}, ${l.name}`)).toEqual(['finalize, schedule']);
    expect(plan.findings.filter((f) => f.verdict !== 'ok')).toHaveLength(6);

    const fixed = await s.cli('check', '--fix');
    expect(fixed.code, fixed.stderr).toBe(0);
    for (const line of [
      '↺ put back orders queue, visibility timeout: VisibilityTimeout 20 → 180',
      `↺ put back aggregate queue, coalescing: DelaySeconds 0 → 2`,
      `↺ put back ingest, partial batch responses: ${mapping?.UUID}: FunctionResponseTypes [] → [ReportBatchItemFailures]`,
      `↺ put back ingest, wiring: TABLE_NAME restored-table → ${s.outputs.TableName}`,
      '↺ put back aggregate, reserved concurrency: reserved concurrency 0 → none',
      '· left finalize, schedule: paused, perhaps on purpose: `onceflow resume finalize` when it should run',
      '5 settings put back, 1 left',
    ])
      expect(fixed.stderr).toContain(line);
    expect(fixed.stderr).toMatch(/: \d+ checks, 0 failed, 1 warning$/m);
    expect(await flagged()).toEqual([{ subject: 'finalize', name: 'schedule', verdict: 'warn' }]);
    // What an operator added by hand stays; what the template sets is back.
    const after = await lambda.send(
      new GetFunctionConfigurationCommand({ FunctionName: s.outputs.IngestFunctionName }),
    );
    expect(after.Environment?.Variables).toEqual({
      ...deployedEnvironment,
      POWERTOOLS_LOG_LEVEL: 'DEBUG',
    });

    // And the stack put back applies the reference stream as deployed.
    expect((await s.cli('send', SEED)).code).toBe(0);
    expect((await s.cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);
    expect(JSON.parse((await s.cli('orders', '--json')).stdout)).toEqual(expectedOrders());
    expect((await s.cli('check', '--dry-run')).stderr).toContain('--dry-run goes with --fix');
  });
  it('creates a trigger and two schedules deleted by hand again with check --fix, as the deployed template sets them', async () => {
    await using s = await stack();
    const config = {
      endpoint: s.runtime.endpoint,
      region: s.runtime.region,
      credentials: LOCAL_CREDENTIALS,
    };
    const lambda = new LambdaClient(config);
    const events = new EventBridgeClient(config);
    const listed = async () =>
      (
        await lambda.send(
          new ListEventSourceMappingsCommand({ FunctionName: s.outputs.AggregateFunctionName }),
        )
      ).EventSourceMappings ?? [];
    const [deployed] = await listed();
    await lambda.send(new DeleteEventSourceMappingCommand({ UUID: deployed?.UUID }));
    // The finalizer's and the pending watcher's rules, deleted as EventBridge requires: their
    // targets first.
    const ruleOf = async (functionName: string | undefined) => {
      const TargetArn = `arn:aws:lambda:${s.runtime.region}:000000000000:function:${functionName}`;
      const names = async () =>
        (await events.send(new ListRuleNamesByTargetCommand({ TargetArn }))).RuleNames;
      const [name = ''] = (await names()) ?? [];
      const read = async () => ({
        rules: (await events.send(new ListRulesCommand({ NamePrefix: name }))).Rules,
        targets: (await events.send(new ListTargetsByRuleCommand({ Rule: name }))).Targets,
      });
      return { name, names, read, deployed: await read() };
    };
    const finalizeRule = await ruleOf(s.outputs.FinalizeFunctionName);
    const watchRule = await ruleOf(s.outputs.WatchFunctionName);
    for (const rule of [finalizeRule, watchRule]) {
      await events.send(new RemoveTargetsCommand({ Rule: rule.name, Ids: ['Target0'] }));
      await events.send(new DeleteRuleCommand({ Name: rule.name }));
    }

    // Reported, not fatal: `status` reads the others, and `pause` names the way back.
    const status = parseJson(
      v.object({ triggers: v.record(v.string(), v.string()) }),
      (await s.cli('status', '--json')).stdout,
    );
    expect(status.triggers).toEqual({
      ingest: 'Enabled',
      aggregate: 'none',
      finalize: 'none',
      watch: 'none',
    });
    expect((await s.cli('status')).stdout).toContain(
      'triggers: ingest enabled, aggregate MISSING, finalize MISSING, watch MISSING (`onceflow check --fix` creates a missing trigger as deployed)',
    );
    expect((await s.cli('pause', 'aggregate')).stderr).toContain('aggregate has no trigger in');
    expect((await s.cli('pause', 'finalize')).stderr).toContain(
      `finalize has no schedule in ${s.runtime.stack.stackName} (\`onceflow check --fix\` creates it as deployed)`,
    );
    // Ingest applies the stream; its hour notifications wait, with nothing to take them.
    expect((await s.cli('send', SEED)).code).toBe(0);
    const waiting = await s.cli('drain', '--timeout', '3');
    expect(waiting.code).toBe(1);
    expect(waiting.stderr).toContain(
      "aggregate's trigger is missing (`onceflow check --fix` creates it as deployed)",
    );
    const missing = await s.cli('check');
    expect(missing.code, missing.stderr).toBe(1);
    expect(missing.stdout).toContain(
      '✗ aggregate, trigger: no event source mapping from its queue',
    );
    expect(missing.stdout).toContain(
      '! finalize, schedule: no rule invokes it: no hour is finalized (a rule deleted by hand',
    );
    // Every alarm reads missing data as fine: without the watcher's runs, a stuck batch is silent.
    expect(missing.stdout).toContain(
      '! watch, schedule: no rule invokes it: no stuck batch is noticed (the OldestPendingBatchAge alarm reads no data as fine)',
    );
    const fixed = await s.cli('check', '--fix');
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(fixed.stderr).toContain(
      `↺ put back aggregate, trigger: create it from ${s.outputs.AggregateQueueArn}: batch size 10, maximum concurrency 10, ReportBatchItemFailures`,
    );
    for (const [fn, rule] of [
      ['finalize', finalizeRule],
      ['watch', watchRule],
    ] as const) {
      expect(fixed.stderr).toContain(
        `↺ put back ${fn}, schedule: create rule ${rule.name}: ${rule.deployed.rules?.[0]?.ScheduleExpression}, ENABLED, target Target0`,
      );
      // The same rule again, by its name, so the function's permission for it holds.
      expect(await rule.names()).toEqual([rule.name]);
      expect(await rule.read()).toEqual(rule.deployed);
    }
    expect(fixed.stderr).toMatch(/: \d+ checks, 0 failed, 0 warnings$/m);
    const [created] = await listed();
    expect(created?.UUID).not.toBe(deployed?.UUID);
    expect(created).toMatchObject({
      State: 'Enabled',
      BatchSize: deployed?.BatchSize,
      MaximumBatchingWindowInSeconds: deployed?.MaximumBatchingWindowInSeconds,
      ScalingConfig: deployed?.ScalingConfig,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });

    // The notifications that waited are taken by the new trigger, and the hours published.
    expect((await s.cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);
    expect(essence(JSON.parse((await s.cli('aggregates', '--json')).stdout))).toEqual(
      expectedHourly(),
    );
    // And the rule runs the finalizer again.
    expect(await s.runtime.runSchedule('FinalizeHours')).toMatchObject({
      finalized: expect.any(Array),
    });
  });
  it('rejects a bad interval, an unreachable or unknown stack, says when it cannot read a queue, names a deleted queue in status and check, and creates it again with check --fix', async () => {
    const interval = await onceflow(['reconcile', '--from', '2026-10-02', '--to', '2026-10-01']);
    expect(interval.code).toBe(1);
    expect(interval.stderr).toContain('--from 2026-10-02 must be before --to 2026-10-01');
    const timeout = await onceflow(['drill', 'restore', '--at', '2026-10-01', '--timeout', 'soon']);
    expect(timeout.code).toBe(1);
    expect(timeout.stderr).toContain("argument 'soon' is invalid. seconds between 1 and");
    const limit = await onceflow(['replay', 'dlq', '--dry-run', '--limit', '2.5']);
    expect(limit.code).toBe(1);
    expect(limit.stderr).toContain("argument '2.5' is invalid. a count: a whole number, not 2.5");
    const rate = await onceflow(['replay', 'dlq', '--rate', '501']);
    expect(rate.code).toBe(1);
    expect(rate.stderr).toContain("argument '501' is invalid. messages a second between 1 and 500");
    const paced = await onceflow(['replay', 'dlq', '--dry-run', '--rate', '5']);
    expect(paced.code).toBe(1);
    expect(paced.stderr).toContain("option '--rate <n>' cannot be used with option '--dry-run'");
    const unreachable = await onceflow([
      '--target',
      'localstack',
      '--endpoint',
      'http://127.0.0.1:9',
      'status',
    ]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/could not reach http:\/\/127\.0\.0\.1:9/);
    expect(unreachable.stderr).not.toContain('caused by');
    // --verbose prints the chain: the CLI's error, then the SDK's error that caused it.
    const verbose = await onceflow([
      '--verbose',
      '--target',
      'localstack',
      '--endpoint',
      'http://127.0.0.1:9',
      'status',
    ]);
    expect(verbose.stderr).toMatch(/CliError: could not reach[\s\S]*\ncaused by: \w+/);
    await using s = await stack();
    const unknown = await onceflow([
      '--target',
      'localstack',
      '--endpoint',
      s.runtime.endpoint,
      '--stack-name',
      'no-such-stack',
      'status',
    ]);
    expect(unknown.stderr).toContain('onceflow: unknown stack no-such-stack');
    // A queue that cannot be read is said at once, not reported as a queue slow to drain.
    await s.runtime.clients.sqs.send(
      new DeleteQueueCommand({ QueueUrl: s.outputs.AggregateQueueUrl }),
    );
    const drained = await s.cli('drain', '--timeout', '600');
    expect(drained.code).toBe(1);
    expect(drained.stderr).toContain("onceflow: could not read the queues' depth: ");
    expect(drained.stderr).not.toContain('did not drain');
    // `status` and `check` name a deleted queue, and a deleted DLQ, rather than stop at them.
    await s.runtime.clients.sqs.send(new DeleteQueueCommand({ QueueUrl: s.outputs.OrdersDlqUrl }));
    const status = await s.cli('status');
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/│ orders DLQ +│ MISSING +│/);
    expect(status.stdout).toMatch(/│ aggregate +│ MISSING +│/);
    expect(status.stderr).toContain('a queue is missing: `onceflow check` says what that breaks');
    expect(
      parseJson(
        v.object({ queues: v.array(v.record(v.string(), v.unknown())) }),
        (await s.cli('status', '--json')).stdout,
      ).queues,
    ).toEqual([
      { name: 'orders', visible: 0, inFlight: 0, delayed: 0 },
      { name: 'orders DLQ', missing: true },
      { name: 'aggregate', missing: true },
      { name: 'aggregate DLQ', visible: 0, inFlight: 0, delayed: 0 },
    ]);
    const checked = await s.cli('check');
    expect(checked.code).toBe(1);
    expect(checked.stdout).toContain(
      `✗ orders queue, dead-letter queue: ${s.outputs.OrdersDlqArn} does not exist (deleted by hand?)`,
    );
    expect(checked.stdout).toContain(
      "✗ aggregate queue, queue: does not exist (deleted by hand?): producers' sends fail",
    );
    // Created again by name, with the template's attributes and policy: the same URLs and ARNs.
    const fixed = await s.cli('check', '--fix');
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(fixed.stderr).toMatch(
      /↺ put back orders queue, dead-letter queue: create \S+OrdersQueueDlq\S+ again with the template's 3 attributes and its policy/,
    );
    expect(fixed.stderr).toContain('↺ put back aggregate queue, queue: create ');
    expect(fixed.stderr).toContain('2 settings put back, 0 left');
    expect(fixed.stderr).toMatch(/: \d+ checks, 0 failed, 0 warnings$/m);
    const { Attributes: dlq = {} } = await s.runtime.clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: s.outputs.OrdersDlqUrl, AttributeNames: ['All'] }),
    );
    expect(dlq).toMatchObject({
      QueueArn: s.outputs.OrdersDlqArn,
      MessageRetentionPeriod: '1209600',
      Policy: expect.stringContaining('aws:SecureTransport'),
    });
    // The stack runs on them: the reference stream applies and its hours are published.
    expect((await s.cli('send', SEED)).code).toBe(0);
    expect((await s.cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);
    expect(essence(JSON.parse((await s.cli('aggregates', '--json')).stdout))).toEqual(
      expectedHourly(),
    );
  });
});
