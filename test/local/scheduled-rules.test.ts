/**
 * EventBridge rules run by the local runtime as EventBridge and Lambda run them: a cron rule on
 * the minute it names, its target sent the scheduled event or a constant input, a failed run
 * retried by "Lambda" with the same event as often as the function's event invoke config allows,
 * and a rule the runtime does not run named rather than silently ignored; an `Event` invocation
 * of the Invoke API retried the same way, its outcome sent to the function's destinations and
 * dead-letter queue; EventBridge's API answering for the rules; an EventBridge Scheduler schedule
 * run from its creation, its input's context attributes filled in. The assembly is written by hand: functions that record
 * the events they get, two of them failing their first invocation.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import AWS from 'aws-sdk';
import * as v from 'valibot';
import { afterAll, describe, expect, it } from 'vitest';
import type { AsyncOutcome } from '../../local/async-invocations.ts';
import { LOCAL_CREDENTIALS } from '../../local/emulators.ts';
import { waitFor } from '../../local/net.ts';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { writeHandAssembly } from '../support/assembly.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { useEmulators } from '../support/emulators.ts';
import { uniqueName } from '../support/names.ts';

const emulators = useEmulators();
const work = mkdtempSync(join(tmpdir(), 'onceflow-rules-'));

/** Appends each event to `EVENTS_FILE`; with `FAIL_FIRST`, its first invocation throws. */
const HANDLER = `
import { appendFileSync, existsSync } from 'node:fs';
export const handler = async (event) => {
  const first = !existsSync(process.env.EVENTS_FILE);
  appendFileSync(process.env.EVENTS_FILE, JSON.stringify(event) + '\\n');
  if (first && process.env.FAIL_FIRST) throw new Error('the first run fails');
  if (process.env.FAIL_ALWAYS) throw new Error('it always fails');
  return { recorded: true };
};
`;

const fn = (variables: Record<string, unknown>, properties: Record<string, unknown> = {}) => ({
  Type: 'AWS::Lambda::Function',
  Metadata: { 'aws:asset:path': 'asset.rules' },
  Properties: {
    Handler: 'index.handler',
    Timeout: 30,
    MemorySize: 128,
    Environment: { Variables: variables },
    ...properties,
  },
});

const writeAssembly = (stackName: string, rules: Record<string, unknown>) => {
  const dir = mkdtempSync(join(work, 'events-'));
  const assembly = writeHandAssembly(
    work,
    stackName,
    {
      Resources: {
        Work: { Type: 'AWS::SQS::Queue', Properties: {} },
        Flaky: fn({ EVENTS_FILE: join(dir, 'flaky.ndjson'), FAIL_FIRST: '1' }),
        Steady: fn({ EVENTS_FILE: join(dir, 'steady.ndjson') }),
        // No event invoke config: Lambda's defaults, two retries.
        Once: fn({ EVENTS_FILE: join(dir, 'once.ndjson'), FAIL_FIRST: '1' }),
        FlakyAsync: {
          Type: 'AWS::Lambda::EventInvokeConfig',
          Properties: {
            FunctionName: { Ref: 'Flaky' },
            Qualifier: '$LATEST',
            MaximumRetryAttempts: 1,
          },
        },
        ...rules,
      },
    },
    { 'asset.rules': HANDLER },
  );
  return { assembly, dir };
};

const runtimes: LocalRuntime[] = [];
afterAll(async () => {
  await Promise.all(runtimes.map((r) => r.stop()));
});

const events = (dir: string, file: string): unknown[] => {
  try {
    return readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as unknown);
  } catch {
    return [];
  }
};

describe('scheduled rules in the local runtime', () => {
  it('runs a cron rule on its minute, retries a failed run with the same event, and sends a constant input', async () => {
    const stackName = uniqueName('rules');
    const target = (id: string, extra: Record<string, unknown> = {}) => [
      { Arn: { 'Fn::GetAtt': [id, 'Arn'] }, Id: 'Target0', ...extra },
    ];
    const { assembly, dir } = writeAssembly(stackName, {
      EveryMinute: {
        Type: 'AWS::Events::Rule',
        Properties: { ScheduleExpression: 'cron(* * * * ? *)', Targets: target('Flaky') },
      },
      WithInput: {
        Type: 'AWS::Events::Rule',
        Properties: {
          ScheduleExpression: 'cron(* * * * ? *)',
          Targets: target('Steady', {
            Input: { 'Fn::Join': ['', ['{"queue":"', { Ref: 'Work' }, '"}']] },
          }),
        },
      },
      OnUpload: {
        Type: 'AWS::Events::Rule',
        Properties: { EventPattern: { source: ['aws.s3'] }, Targets: target('Steady') },
      },
    });
    const outcomes: [string, AsyncOutcome][] = [];
    const runtime = await startLocalRuntime({
      assemblyDir: assembly,
      emulators: emulators(),
      asyncRetryDelaysMs: [200, 400],
      onScheduled: (f, outcome) => outcomes.push([f.logicalId, outcome]),
    });
    runtimes.push(runtime);
    expect(runtime.stack.notRun).toEqual([
      'OnUpload: an event pattern rule (only schedules run locally)',
    ]);

    // The first minute boundary runs both rules; Flaky fails and is retried once.
    await waitFor(
      async () =>
        outcomes.some(([id, o]) => id === 'Flaky' && o.attempt === 2) &&
        outcomes.some(([id]) => id === 'Steady'),
      { timeoutMs: DEADLINE_MS, what: 'both rules to run and the failed run to be retried' },
    );
    const flaky = outcomes.filter(([id]) => id === 'Flaky').map(([, o]) => o);
    expect(flaky[0]).toMatchObject({ attempt: 1, error: { errorMessage: 'the first run fails' } });
    expect(flaky[0]?.retryAtMs).toEqual(expect.any(Number));
    expect(flaky[1]).toMatchObject({ attempt: 2, result: { recorded: true } });

    const [first, retried] = events(dir, 'flaky.ndjson');
    expect(retried).toEqual(first);
    expect(first).toMatchObject({
      source: 'aws.events',
      'detail-type': 'Scheduled Event',
      resources: [`arn:aws:events:${runtime.region}:000000000000:rule/${stackName}-EveryMinute`],
    });
    // Runs fall on whole minutes, in UTC.
    expect(String((first as { time: string }).time)).toMatch(/:00Z$/);
    const queueUrl = runtime.stack.queues.find((q) => q.logicalId === 'Work')?.url;
    expect(events(dir, 'steady.ndjson')[0]).toEqual({ queue: queueUrl });
  });

  it('runs an EventBridge Scheduler schedule from its creation with its context attributes filled in, and not a disabled one', async () => {
    const stackName = uniqueName('scheduler');
    const schedule = (target: unknown, extra: Record<string, unknown> = {}) => ({
      Type: 'AWS::Scheduler::Schedule',
      Properties: {
        ScheduleExpression: 'rate(1 minute)',
        ScheduleExpressionTimezone: 'Europe/Berlin',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: {
          Arn: target,
          RoleArn: 'arn:aws:iam::000000000000:role/scheduler',
          Input: '{"at":"<aws.scheduler.scheduled-time>","arn":"<aws.scheduler.schedule-arn>"}',
        },
        ...extra,
      },
    });
    const { assembly, dir } = writeAssembly(stackName, {
      Every: schedule({ 'Fn::GetAtt': ['Steady', 'Arn'] }, { GroupName: 'jobs' }),
      Off: schedule({ 'Fn::GetAtt': ['Once', 'Arn'] }, { State: 'DISABLED' }),
      ToQueue: schedule({ 'Fn::GetAtt': ['Work', 'Arn'] }),
    });
    const outcomes: [string, AsyncOutcome][] = [];
    const created = Date.now();
    const runtime = await startLocalRuntime({
      assemblyDir: assembly,
      emulators: emulators(),
      onScheduled: (f, outcome) => outcomes.push([f.logicalId, outcome]),
    });
    runtimes.push(runtime);
    expect(runtime.stack.notEmulated).not.toContain('AWS::Scheduler::Schedule');
    expect(runtime.stack.notRun).toEqual([
      "ToQueue: a Scheduler schedule whose target is not one of the stack's functions",
    ]);
    // A rate schedule without a start date runs at once.
    await waitFor(async () => outcomes.some(([id]) => id === 'Steady'), {
      timeoutMs: DEADLINE_MS,
      what: 'the schedule’s first run',
    });
    const [event] = events(dir, 'steady.ndjson');
    const Event = v.object({ at: v.string(), arn: v.string() });
    const { at, arn } = v.parse(Event, event);
    expect(arn).toBe(
      `arn:aws:scheduler:${runtime.region}:000000000000:schedule/jobs/${stackName}-Every`,
    );
    expect(at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Date.parse(at)).toBeGreaterThanOrEqual(Math.floor(created / 1000) * 1000);
    expect(events(dir, 'once.ndjson')).toEqual([]);

    // Scheduler's API on the edge, through the SDK for JavaScript v2.
    const scheduler = new AWS.Scheduler({
      endpoint: runtime.endpoint,
      region: runtime.region,
      credentials: new AWS.Credentials(LOCAL_CREDENTIALS),
    });
    const arnOf = (id: string) => runtime.stack.functions.find((f) => f.logicalId === id)?.arn;
    const { Schedules } = await scheduler.listSchedules({ NamePrefix: stackName }).promise();
    expect(Schedules.map((sch) => [sch.Name, sch.GroupName, sch.State])).toEqual([
      [`${stackName}-Every`, 'jobs', 'ENABLED'],
      [`${stackName}-Off`, 'default', 'DISABLED'],
    ]);
    const every = await scheduler
      .getSchedule({ Name: `${stackName}-Every`, GroupName: 'jobs' })
      .promise();
    expect(every).toMatchObject({
      Arn: arn,
      ScheduleExpression: 'rate(1 minute)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { Arn: arnOf('Steady'), RoleArn: 'arn:aws:iam::000000000000:role/scheduler' },
    });
    await expect(
      scheduler.getSchedule({ Name: `${stackName}-Every` }).promise(),
    ).rejects.toMatchObject({ code: 'ResourceNotFoundException' });
    // UpdateSchedule replaces the disabled one: every minute from a second from now (should a
    // loaded machine answer after that second, the run comes a minute later, within the deadline).
    await scheduler
      .updateSchedule({
        Name: `${stackName}-Off`,
        ScheduleExpression: 'rate(1 minute)',
        StartDate: new Date(Date.now() + 1000),
        FlexibleTimeWindow: { Mode: 'OFF' },
        State: 'ENABLED',
        Target: { Arn: arnOf('Once') ?? '', RoleArn: 'role', Input: '{"once":true}' },
      })
      .promise();
    await waitFor(async () => events(dir, 'once.ndjson').length > 0, {
      timeoutMs: DEADLINE_MS,
      what: 'the updated schedule’s run',
    });
    expect(events(dir, 'once.ndjson')).toEqual([{ once: true }]);
    const refused = scheduler
      .updateSchedule({
        Name: `${stackName}-Off`,
        ScheduleExpression: 'cron(0 3 * * ? *)',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: { Arn: arnOf('Once') ?? '', RoleArn: 'role' },
        ScheduleExpressionTimezone: 'Nowhere/Special',
      })
      .promise();
    await expect(refused).rejects.toMatchObject({
      code: 'ValidationException',
      message: 'Invalid ScheduleExpressionTimezone Nowhere/Special',
    });
  });

  it('retries a failed Event invocation of the Invoke API with the same event, as Lambda does', async () => {
    const { assembly, dir } = writeAssembly(uniqueName('async'), {});
    const runtime = await startLocalRuntime({
      assemblyDir: assembly,
      emulators: emulators(),
      asyncRetryDelaysMs: [200, 400],
    });
    runtimes.push(runtime);
    const lambda = new LambdaClient({
      endpoint: runtime.endpoint,
      region: runtime.region,
      credentials: LOCAL_CREDENTIALS,
    });
    const answer = await lambda.send(
      new InvokeCommand({
        FunctionName: runtime.stack.functions.find((f) => f.logicalId === 'Once')?.name,
        InvocationType: 'Event',
        Payload: JSON.stringify({ order: 1001 }),
      }),
    );
    expect(answer.StatusCode).toBe(202);
    expect(answer.$metadata.requestId).toEqual(expect.any(String));
    await waitFor(async () => events(dir, 'once.ndjson').length === 2, {
      timeoutMs: DEADLINE_MS,
      what: 'the failed invocation to be retried',
    });
    expect(events(dir, 'once.ndjson')).toEqual([{ order: 1001 }, { order: 1001 }]);
  });

  it('sends an invocation record to the on-failure and on-success destinations, and the event to the dead-letter queue', async () => {
    const stackName = uniqueName('dest');
    const queue = { Type: 'AWS::SQS::Queue', Properties: {} };
    const arnOf = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
    const { assembly, dir } = writeAssembly(stackName, {
      Failures: queue,
      Successes: queue,
      Dead: queue,
      // Its dead-letter queue is the function's own setting.
      Broken: fn(
        { EVENTS_FILE: join(work, `${stackName}-broken.ndjson`), FAIL_ALWAYS: '1' },
        { DeadLetterConfig: { TargetArn: arnOf('Dead') } },
      ),
      BrokenAsync: {
        Type: 'AWS::Lambda::EventInvokeConfig',
        Properties: {
          FunctionName: { Ref: 'Broken' },
          Qualifier: '$LATEST',
          MaximumRetryAttempts: 1,
          DestinationConfig: {
            OnFailure: { Destination: arnOf('Failures') },
            OnSuccess: { Destination: 'arn:aws:sns:us-east-1:000000000000:alerts' },
          },
        },
      },
      SteadyAsync: {
        Type: 'AWS::Lambda::EventInvokeConfig',
        Properties: {
          FunctionName: { Ref: 'Steady' },
          Qualifier: '$LATEST',
          DestinationConfig: { OnSuccess: { Destination: arnOf('Successes') } },
        },
      },
    });

    const runtime = await startLocalRuntime({
      assemblyDir: assembly,
      emulators: emulators(),
      asyncRetryDelaysMs: [200, 400],
    });
    runtimes.push(runtime);
    expect(runtime.stack.notRun).toEqual([
      "Broken's on-success destination arn:aws:sns:us-east-1:000000000000:alerts: not emulated (the stack's queues and functions are)",
    ]);
    const lambda = new LambdaClient({
      endpoint: runtime.endpoint,
      region: runtime.region,
      credentials: LOCAL_CREDENTIALS,
    });
    const nameOf = (id: string) => runtime.stack.functions.find((f) => f.logicalId === id)?.name;
    for (const [id, order] of [
      ['Broken', 7],
      ['Steady', 8],
    ] as const)
      await lambda.send(
        new InvokeCommand({
          FunctionName: nameOf(id),
          InvocationType: 'Event',
          Payload: JSON.stringify({ order }),
        }),
      );

    const urlOf = (id: string) => runtime.stack.queues.find((q) => q.logicalId === id)?.url;
    const receive = async (id: string) => {
      let messages: Message[] = [];
      await waitFor(
        async () => {
          messages =
            (
              await runtime.clients.sqs.send(
                new ReceiveMessageCommand({
                  QueueUrl: urlOf(id),
                  MessageAttributeNames: ['All'],
                  WaitTimeSeconds: 1,
                }),
              )
            ).Messages ?? [];
          return messages.length > 0;
        },
        { timeoutMs: DEADLINE_MS, what: `a message in ${id}` },
      );
      return messages;
    };
    const [failure] = await receive('Failures');
    const record: unknown = JSON.parse(failure?.Body ?? '{}');
    expect(record).toMatchObject({
      version: '1.0',
      requestContext: {
        functionArn: expect.stringMatching(/:function:.*-Broken:\$LATEST$/),
        condition: 'RetriesExhausted',
        approximateInvokeCount: 2,
      },
      requestPayload: { order: 7 },
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      responsePayload: { errorType: 'Error', errorMessage: 'it always fails' },
    });
    const [dead] = await receive('Dead');
    expect(JSON.parse(dead?.Body ?? '')).toEqual({ order: 7 });
    expect(dead?.MessageAttributes).toMatchObject({
      RequestID: {
        StringValue: v.parse(
          v.object({ requestContext: v.object({ requestId: v.string() }) }),
          record,
        ).requestContext.requestId,
      },
      ErrorCode: { StringValue: '200' },
      ErrorMessage: { StringValue: 'it always fails' },
    });
    const [success] = await receive('Successes');
    expect(JSON.parse(success?.Body ?? '')).toMatchObject({
      requestContext: { condition: 'Success', approximateInvokeCount: 1 },
      requestPayload: { order: 8 },
      responsePayload: { recorded: true },
    });
    expect(events(dir, 'steady.ndjson')).toEqual([{ order: 8 }]);
  });

  it('answers EventBridge’s API for its rules, and pauses and resumes one with DisableRule and EnableRule', async () => {
    const stackName = uniqueName('events');
    const { assembly } = writeAssembly(stackName, {
      Nightly: {
        Type: 'AWS::Events::Rule',
        Properties: {
          Description: 'the nightly run',
          ScheduleExpression: 'cron(0 2 * * ? *)',
          Targets: [
            {
              Arn: { 'Fn::GetAtt': ['Steady', 'Arn'] },
              Id: 'Steady',
              Input: '{"mode":"nightly"}',
              RetryPolicy: { MaximumRetryAttempts: 0 },
            },
          ],
        },
      },
    });
    const runtime = await startLocalRuntime({ assemblyDir: assembly, emulators: emulators() });
    runtimes.push(runtime);
    // The SDK for JavaScript v2's client: another client than the runtime's own.
    const events = new AWS.EventBridge({
      endpoint: runtime.endpoint,
      region: runtime.region,
      credentials: new AWS.Credentials(LOCAL_CREDENTIALS),
    });
    const name = `${stackName}-Nightly`;
    const arn = `arn:aws:events:${runtime.region}:000000000000:rule/${name}`;
    const { Rules } = await events.listRules({ NamePrefix: stackName }).promise();
    expect(Rules).toEqual([
      {
        Name: name,
        Arn: arn,
        State: 'ENABLED',
        Description: 'the nightly run',
        ScheduleExpression: 'cron(0 2 * * ? *)',
        EventBusName: 'default',
      },
    ]);
    const steadyArn = `arn:aws:lambda:${runtime.region}:000000000000:function:${stackName}-Steady`;
    expect((await events.listTargetsByRule({ Rule: name }).promise()).Targets).toEqual([
      {
        Id: 'Steady',
        Arn: steadyArn,
        Input: '{"mode":"nightly"}',
        RetryPolicy: { MaximumRetryAttempts: 0 },
      },
    ]);
    expect(
      (await events.listRuleNamesByTarget({ TargetArn: steadyArn }).promise()).RuleNames,
    ).toEqual([name]);
    await events.disableRule({ Name: name }).promise();
    expect(await events.describeRule({ Name: name }).promise()).toMatchObject({
      State: 'DISABLED',
    });
    await events.enableRule({ Name: name }).promise();
    expect(await events.describeRule({ Name: name }).promise()).toMatchObject({ State: 'ENABLED' });
    await expect(events.describeRule({ Name: 'no-such-rule' }).promise()).rejects.toMatchObject({
      code: 'ResourceNotFoundException',
      message: 'Rule no-such-rule does not exist on EventBus default.',
    });
    await expect(events.putEvents({ Entries: [] }).promise()).rejects.toMatchObject({
      code: 'UnknownOperationException',
    });
  });

  it('deletes a rule and creates it again through EventBridge’s API, and CloudFormation still lists it', async () => {
    const stackName = uniqueName('events');
    const { assembly } = writeAssembly(stackName, {
      Nightly: {
        Type: 'AWS::Events::Rule',
        Properties: {
          ScheduleExpression: 'cron(0 2 * * ? *)',
          Targets: [{ Arn: { 'Fn::GetAtt': ['Steady', 'Arn'] }, Id: 'Steady' }],
        },
      },
    });
    const runtime = await startLocalRuntime({ assemblyDir: assembly, emulators: emulators() });
    runtimes.push(runtime);
    const config = {
      endpoint: runtime.endpoint,
      region: runtime.region,
      credentials: new AWS.Credentials(LOCAL_CREDENTIALS),
    };
    const events = new AWS.EventBridge(config);
    const name = `${stackName}-Nightly`;
    const steadyArn = `arn:aws:lambda:${runtime.region}:000000000000:function:${stackName}-Steady`;

    // As on AWS: a rule with targets cannot be deleted; without them it can, more than once.
    await expect(events.deleteRule({ Name: name }).promise()).rejects.toMatchObject({
      code: 'ValidationException',
      message: "Rule can't be deleted since it has targets.",
    });
    await events.removeTargets({ Rule: name, Ids: ['Steady'] }).promise();
    await events.deleteRule({ Name: name }).promise();
    await events.deleteRule({ Name: name }).promise();
    expect(
      (await events.listRuleNamesByTarget({ TargetArn: steadyArn }).promise()).RuleNames,
    ).toEqual([]);
    await expect(runtime.runSchedule('Steady')).rejects.toThrow(/no scheduled rule runs Steady/);

    // CloudFormation still lists the rule, by the name it had.
    const cloudFormation = new AWS.CloudFormation(config);
    const { StackResourceSummaries = [] } = await cloudFormation
      .listStackResources({ StackName: stackName })
      .promise();
    const listed = (id: string) => StackResourceSummaries.find((r) => r.LogicalResourceId === id);
    expect(listed('Nightly')).toMatchObject({
      ResourceType: 'AWS::Events::Rule',
      PhysicalResourceId: name,
      ResourceStatus: 'CREATE_COMPLETE',
    });
    expect(listed('Steady')?.PhysicalResourceId).toBe(`${stackName}-Steady`);
    expect(listed('Work')?.PhysicalResourceId).toBe(
      runtime.stack.queues.find((q) => q.logicalId === 'Work')?.url,
    );

    // Created again: PutRule, then PutTargets, whose entry for another stack's function fails.
    expect(
      await events
        .putRule({ Name: name, ScheduleExpression: 'cron(0 2 * * ? *)', Description: 'again' })
        .promise(),
    ).toEqual({ RuleArn: `arn:aws:events:${runtime.region}:000000000000:rule/${name}` });
    const elsewhere = 'arn:aws:lambda:us-east-1:000000000000:function:elsewhere';
    expect(
      await events
        .putTargets({
          Rule: name,
          Targets: [
            { Id: 'Steady', Arn: steadyArn, Input: '{"again":true}' },
            { Id: 'Other', Arn: elsewhere },
          ],
        })
        .promise(),
    ).toEqual({
      FailedEntryCount: 1,
      FailedEntries: [
        {
          TargetId: 'Other',
          ErrorCode: 'ValidationException',
          ErrorMessage: `${elsewhere} is not a function of ${stackName}: the local runtime invokes its stack's functions only`,
        },
      ],
    });
    expect(await events.describeRule({ Name: name }).promise()).toMatchObject({
      State: 'ENABLED',
      Description: 'again',
      ScheduleExpression: 'cron(0 2 * * ? *)',
    });
    expect((await events.listTargetsByRule({ Rule: name }).promise()).Targets).toEqual([
      { Id: 'Steady', Arn: steadyArn, Input: '{"again":true}' },
    ]);
    // The rule runs its target again.
    expect(await runtime.runSchedule('Steady')).toEqual({ recorded: true });

    // What EventBridge refuses, refused alike.
    await expect(
      events.putRule({ Name: name, ScheduleExpression: 'rate(1 minutes)' }).promise(),
    ).rejects.toMatchObject({
      code: 'ValidationException',
      message: expect.stringMatching(/rate\(1 minutes\)/),
    });
    await expect(
      events
        .putRule({ Name: `${stackName}-OnUpload`, EventPattern: '{"source":["aws.s3"]}' })
        .promise(),
    ).rejects.toMatchObject({
      code: 'ValidationException',
      message: expect.stringMatching(/scheduled rules only/),
    });
    await expect(
      events.putTargets({ Rule: 'no-such-rule', Targets: [{ Id: 'T', Arn: steadyArn }] }).promise(),
    ).rejects.toMatchObject({ code: 'ResourceNotFoundException' });
  });

  it('refuses to start a stack whose schedule expression EventBridge would refuse', async () => {
    const { assembly } = writeAssembly(uniqueName('rules'), {
      Hourly: {
        Type: 'AWS::Events::Rule',
        Properties: {
          ScheduleExpression: 'cron(0 * * * * *)',
          Targets: [{ Arn: { 'Fn::GetAtt': ['Steady', 'Arn'] }, Id: 'T' }],
        },
      },
    });
    await expect(
      startLocalRuntime({ assemblyDir: assembly, emulators: emulators() }),
    ).rejects.toThrow(
      'Parameter ScheduleExpression is not valid: cron(0 * * * * *) (one of day-of-month and day-of-week must be ?, and only one)',
    );
  });
});
