/**
 * Reserved concurrency in the local runtime, as Lambda enforces it: the template's
 * `ReservedConcurrentExecutions` and `PutFunctionConcurrency` cap a function's invocations at
 * once, whatever invokes it. A synchronous Invoke past the cap gets Lambda's 429; an
 * asynchronous one waits, throttled, for a free slot; an SQS mapping's batch is retried until its
 * visibility timeout runs out and then returns to the queue, so that a function reserved at 0
 * (the kill switch) sends its messages to the DLQ unprocessed, the pitfall AWS warns about; and
 * a mapping the template creates disabled waits for UpdateEventSourceMapping. The
 * assembly is written by hand: functions that record each event and can be held running.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DeleteFunctionConcurrencyCommand,
  GetAccountSettingsCommand,
  GetEventSourceMappingCommand,
  GetFunctionCommand,
  GetFunctionConcurrencyCommand,
  InvokeCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
  PutFunctionConcurrencyCommand,
  TooManyRequestsException,
  UpdateEventSourceMappingCommand,
} from '@aws-sdk/client-lambda';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it, onTestFinished } from 'vitest';
import { queueDepth } from '../../adapters/sqs.ts';
import { LOCAL_CREDENTIALS } from '../../local/emulators.ts';
import { waitFor } from '../../local/net.ts';
import { startLocalRuntime } from '../../local/runtime.ts';
import { writeHandAssembly } from '../support/assembly.ts';
import { awsCli, awsCliVersion, reportMissingAwsCli } from '../support/aws-cli.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { useEmulators } from '../support/emulators.ts';
import { uniqueName } from '../support/names.ts';

const emulators = useEmulators();
const work = mkdtempSync(join(tmpdir(), 'onceflow-reserved-'));

/** Records each event; one with `hold` runs until the file it names exists. */
const HANDLER = `
import { appendFileSync, existsSync } from 'node:fs';
export const handler = async (event) => {
  appendFileSync(process.env.EVENTS_FILE, JSON.stringify(event) + '\\n');
  while (event.hold && !existsSync(event.hold)) await new Promise((r) => setTimeout(r, 20));
  return { batchItemFailures: [] };
};
`;

const fn = (dir: string, name: string, properties: Record<string, unknown> = {}) => ({
  Type: 'AWS::Lambda::Function',
  Metadata: { 'aws:asset:path': 'asset.held' },
  Properties: {
    Handler: 'index.handler',
    Timeout: 30,
    MemorySize: 128,
    Environment: { Variables: { EVENTS_FILE: join(dir, `${name}.ndjson`) } },
    ...properties,
  },
});
const arnOf = (id: string) => ({ 'Fn::GetAtt': [id, 'Arn'] });
const mapping = (queue: string, target: string, properties: Record<string, unknown> = {}) => ({
  Type: 'AWS::Lambda::EventSourceMapping',
  Properties: {
    EventSourceArn: arnOf(queue),
    FunctionName: { Ref: target },
    BatchSize: 1,
    FunctionResponseTypes: ['ReportBatchItemFailures'],
    ...properties,
  },
});

/**
 * Held: reserved 1, its successes recorded in a queue. Gate: fed by a queue whose messages come
 * back after 2 s and go to the DLQ on their third receive. Capped: reserved 1 behind a mapping
 * that may run 2 at once.
 */
const start = async (extra: Record<string, unknown> = {}) => {
  const dir = mkdtempSync(join(work, 'events-'));
  const assemblyDir = writeHandAssembly(
    work,
    uniqueName('reserved'),
    {
      Resources: {
        Successes: { Type: 'AWS::SQS::Queue', Properties: {} },
        Dlq: { Type: 'AWS::SQS::Queue', Properties: {} },
        Work: {
          Type: 'AWS::SQS::Queue',
          Properties: {
            VisibilityTimeout: 2,
            RedrivePolicy: { deadLetterTargetArn: arnOf('Dlq'), maxReceiveCount: 2 },
          },
        },
        Other: { Type: 'AWS::SQS::Queue', Properties: {} },
        Held: fn(dir, 'held', { ReservedConcurrentExecutions: 1 }),
        HeldAsync: {
          Type: 'AWS::Lambda::EventInvokeConfig',
          Properties: {
            FunctionName: { Ref: 'Held' },
            Qualifier: '$LATEST',
            DestinationConfig: { OnSuccess: { Destination: arnOf('Successes') } },
          },
        },
        Gate: fn(dir, 'gate', { Timeout: 2 }),
        GateTrigger: mapping('Work', 'Gate'),
        Capped: fn(dir, 'capped', { ReservedConcurrentExecutions: 1 }),
        CappedTrigger: mapping('Other', 'Capped', { ScalingConfig: { MaximumConcurrency: 2 } }),
        ...extra,
      },
    },
    { 'asset.held': HANDLER },
  );
  const runtime = await startLocalRuntime({ assemblyDir, emulators: emulators() });
  // Stopped with its test: the edge serves one account, whose reservations add up across stacks.
  onTestFinished(() => runtime.stop());
  const lambda = new LambdaClient({
    endpoint: runtime.endpoint,
    region: runtime.region,
    credentials: LOCAL_CREDENTIALS,
    // Each throttle is seen, not retried away by the SDK.
    maxAttempts: 1,
  });
  const nameOf = (id: string) => runtime.stack.functions.find((f) => f.logicalId === id)?.name;
  const urlOf = (id: string) => runtime.stack.queues.find((q) => q.logicalId === id)?.url;
  const events = (name: string): unknown[] => {
    try {
      return readFileSync(join(dir, `${name}.ndjson`), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as unknown);
    } catch {
      return [];
    }
  };
  /** A hold an invocation waits on, and its release. */
  const hold = () => {
    const file = join(dir, `${uniqueName('release')}`);
    return { file, release: () => writeFileSync(file, '') };
  };
  return { runtime, lambda, nameOf, urlOf, events, hold };
};

const bodiesOf = (events: unknown[]) =>
  events.flatMap((e) =>
    typeof e === 'object' && e !== null && 'Records' in e && Array.isArray(e.Records)
      ? e.Records.map((r: { body?: unknown }) => r.body)
      : [],
  );

reportMissingAwsCli('its reserved-concurrency test is');

describe('reserved concurrency in the local runtime', () => {
  it.skipIf(!awsCliVersion)(
    'answers the AWS CLI’s put-, get- and delete-function-concurrency, and its invoke is throttled at 0',
    async () => {
      const { runtime, nameOf } = await start();
      const aws = (...args: string[]) =>
        awsCli(
          runtime,
          'lambda',
          ...args,
          '--function-name',
          nameOf('Gate') ?? '',
          '--output',
          'json',
        );
      const put = await aws('put-function-concurrency', '--reserved-concurrent-executions', '0');
      expect(put.status, put.stderr).toBe(0);
      expect(JSON.parse(put.stdout)).toEqual({ ReservedConcurrentExecutions: 0 });
      const read = await aws('get-function-concurrency');
      expect(JSON.parse(read.stdout)).toEqual({ ReservedConcurrentExecutions: 0 });
      const out = join(mkdtempSync(join(work, 'cli-')), 'out.json');
      // The CLI retries a throttle a few times before it gives up.
      const invoked = await aws('invoke', out);
      expect(invoked.status).not.toBe(0);
      expect(invoked.stderr).toContain('TooManyRequestsException');
      expect((await aws('delete-function-concurrency')).status).toBe(0);
      // Nothing reserved: an empty answer, which the CLI prints as nothing.
      const none = await aws('get-function-concurrency');
      expect([none.status, none.stdout.trim()]).toEqual([0, '']);
    },
  );

  it('throttles a synchronous Invoke past the reservation with Lambda’s 429, and runs one once a slot is free', async () => {
    const { runtime, lambda, nameOf, events, hold } = await start();
    const held = hold();
    const running = runtime.invoke('Held', { hold: held.file });
    await waitFor(async () => events('held').length === 1, {
      timeoutMs: DEADLINE_MS,
      what: 'the held invocation to start',
    });
    const refused = await lambda
      .send(new InvokeCommand({ FunctionName: nameOf('Held'), Payload: '{"n":2}' }))
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TooManyRequestsException);
    expect(refused).toMatchObject({
      Reason: 'ReservedFunctionConcurrentInvocationLimitExceeded',
      message: 'Rate Exceeded.',
      $metadata: { httpStatusCode: 429 },
    });
    // Refused before it ran: the function never saw it.
    expect(events('held')).toEqual([{ hold: held.file }]);
    expect(runtime.throttles.get('Held')).toBe(1);
    held.release();
    await running;
    const answer = await lambda.send(
      new InvokeCommand({ FunctionName: nameOf('Held'), Payload: '{"n":3}' }),
    );
    expect(answer.StatusCode).toBe(200);
    expect(answer.FunctionError).toBeUndefined();
    expect(events('held')).toEqual([{ hold: held.file }, { n: 3 }]);
  });

  it('runs a throttled Event invocation once a slot is free, once, its retries unspent', async () => {
    const { runtime, lambda, nameOf, urlOf, events, hold } = await start();
    const held = hold();
    const running = runtime.invoke('Held', { hold: held.file });
    await waitFor(async () => events('held').length === 1, {
      timeoutMs: DEADLINE_MS,
      what: 'the held invocation to start',
    });
    const accepted = await lambda.send(
      new InvokeCommand({
        FunctionName: nameOf('Held'),
        InvocationType: 'Event',
        Payload: '{"n":2}',
      }),
    );
    expect(accepted.StatusCode).toBe(202);
    await waitFor(async () => (runtime.throttles.get('Held') ?? 0) >= 1, {
      timeoutMs: DEADLINE_MS,
      what: 'the Event invocation to be throttled',
    });
    expect(events('held')).toEqual([{ hold: held.file }]);
    held.release();
    await running;
    const { Messages = [] } = await runtime.clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: urlOf('Successes'), WaitTimeSeconds: 20 }),
    );
    expect(Messages).toHaveLength(1);
    expect(JSON.parse(Messages[0]?.Body ?? '{}')).toMatchObject({
      requestContext: { condition: 'Success', approximateInvokeCount: 1 },
      requestPayload: { n: 2 },
    });
    expect(events('held')).toEqual([{ hold: held.file }, { n: 2 }]);
  });

  it('runs a mapping’s throttled batch as soon as a slot is free, still on its first receive', async () => {
    const { runtime, urlOf, events, hold } = await start();
    const held = hold();
    const running = runtime.invoke('Capped', { hold: held.file });
    await waitFor(async () => events('capped').length === 1, {
      timeoutMs: DEADLINE_MS,
      what: 'the held invocation to start',
    });
    await runtime.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: urlOf('Other'), MessageBody: 'waits' }),
    );
    await waitFor(async () => (runtime.throttles.get('Capped') ?? 0) >= 1, {
      timeoutMs: DEADLINE_MS,
      what: 'the batch to be throttled',
    });
    held.release();
    await running;
    await waitFor(async () => events('capped').length === 2, {
      timeoutMs: DEADLINE_MS,
      what: 'the throttled batch to run',
    });
    // Retried within its visibility timeout, not returned to the queue and received again.
    expect(events('capped')[1]).toMatchObject({
      Records: [{ body: 'waits', attributes: { ApproximateReceiveCount: '1' } }],
    });
  });

  it('sends a mapping’s messages to the DLQ unprocessed while the function is reserved at 0, and runs the next once the reservation is gone', async () => {
    const { runtime, lambda, nameOf, urlOf, events } = await start();
    const FunctionName = nameOf('Gate');
    const put = await lambda.send(
      new PutFunctionConcurrencyCommand({ FunctionName, ReservedConcurrentExecutions: 0 }),
    );
    expect(put.ReservedConcurrentExecutions).toBe(0);
    const read = await lambda.send(new GetFunctionConcurrencyCommand({ FunctionName }));
    expect(read.ReservedConcurrentExecutions).toBe(0);
    expect((await lambda.send(new GetFunctionCommand({ FunctionName }))).Concurrency).toEqual({
      ReservedConcurrentExecutions: 0,
    });

    const { sqs } = runtime.clients;
    await sqs.send(new SendMessageCommand({ QueueUrl: urlOf('Work'), MessageBody: 'first' }));
    // Throttled through two visibility timeouts, then moved on its third receive.
    const dead: (string | undefined)[] = [];
    await waitFor(
      async () => {
        const out = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: urlOf('Dlq'), WaitTimeSeconds: 1 }),
        );
        dead.push(...(out.Messages ?? []).map((m) => m.Body));
        return dead.length > 0;
      },
      { timeoutMs: DEADLINE_MS, what: 'the throttled message to reach the DLQ' },
    );
    expect(dead).toEqual(['first']);
    expect(events('gate')).toEqual([]);
    expect(runtime.throttles.get('Gate')).toBeGreaterThanOrEqual(2);

    await lambda.send(new DeleteFunctionConcurrencyCommand({ FunctionName }));
    const removed = await lambda.send(new GetFunctionConcurrencyCommand({ FunctionName }));
    expect(removed.ReservedConcurrentExecutions).toBeUndefined();
    await sqs.send(new SendMessageCommand({ QueueUrl: urlOf('Work'), MessageBody: 'second' }));
    await waitFor(async () => bodiesOf(events('gate')).includes('second'), {
      timeoutMs: DEADLINE_MS,
      what: 'the next message to run',
    });
    // Never the first: no throttled retry outlives its message's visibility timeout.
    expect(bodiesOf(events('gate'))).toEqual(['second']);
  });

  it('stops retrying a throttled batch once its mapping is disabled, which reads Disabled with the message still hidden', async () => {
    const { runtime, lambda, nameOf, urlOf } = await start({
      // Hidden for ten minutes: only a retry given up on lets the mapping be disabled before.
      Slow: { Type: 'AWS::SQS::Queue', Properties: { VisibilityTimeout: 600 } },
      Blocked: fn(work, 'blocked', { ReservedConcurrentExecutions: 0 }),
      BlockedTrigger: mapping('Slow', 'Blocked'),
    });
    await runtime.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: urlOf('Slow'), MessageBody: 'held back' }),
    );
    await waitFor(() => (runtime.throttles.get('Blocked') ?? 0) > 0, {
      timeoutMs: DEADLINE_MS,
      what: 'the batch to be throttled',
    });
    const { EventSourceMappings: [{ UUID } = {}] = [] } = await lambda.send(
      new ListEventSourceMappingsCommand({ FunctionName: nameOf('Blocked') }),
    );
    await lambda.send(new UpdateEventSourceMappingCommand({ UUID, Enabled: false }));
    await waitFor(
      async () =>
        (await lambda.send(new GetEventSourceMappingCommand({ UUID }))).State === 'Disabled',
      { timeoutMs: DEADLINE_MS, what: 'the mapping to be disabled' },
    );
    // Given back to the queue unprocessed, one receive spent: it reappears after its timeout.
    expect(await queueDepth(runtime.clients.sqs, urlOf('Slow') ?? '')).toMatchObject({
      visible: 0,
      inFlight: 1,
    });
  });

  it('keeps a mapping the template creates disabled as Disabled, and runs its queue once enabled', async () => {
    const { runtime, lambda, nameOf, urlOf, events } = await start({
      Waiting: { Type: 'AWS::SQS::Queue', Properties: {} },
      WaitingTrigger: mapping('Waiting', 'Gate', { Enabled: false }),
    });
    const { EventSourceMappings = [] } = await lambda.send(
      new ListEventSourceMappingsCommand({ FunctionName: nameOf('Gate') }),
    );
    const queueArn = runtime.stack.queues.find((q) => q.logicalId === 'Waiting')?.arn;
    const waiting = EventSourceMappings.find((m) => m.EventSourceArn === queueArn);
    expect(waiting?.State).toBe('Disabled');
    await runtime.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: urlOf('Waiting'), MessageBody: 'woken' }),
    );
    await lambda.send(new UpdateEventSourceMappingCommand({ UUID: waiting?.UUID, Enabled: true }));
    await waitFor(async () => bodiesOf(events('gate')).includes('woken'), {
      timeoutMs: DEADLINE_MS,
      what: 'the message to run once the mapping is enabled',
    });
  });

  it('refuses a reservation that would leave fewer than 100 of the account unreserved, or a negative one, and reports what is left', async () => {
    const { lambda, nameOf } = await start();
    const refused = (value: number) =>
      lambda
        .send(
          new PutFunctionConcurrencyCommand({
            FunctionName: nameOf('Gate'),
            ReservedConcurrentExecutions: value,
          }),
        )
        .catch((error: unknown) => error);
    // Held and Capped reserve 1 each: 898 is the most left to reserve.
    expect(await refused(899)).toMatchObject({
      name: 'InvalidParameterValueException',
      message:
        "Specified ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of [100].",
    });
    expect(await refused(-1)).toMatchObject({ name: 'ValidationException' });
    const settings = () => lambda.send(new GetAccountSettingsCommand({}));
    expect(await settings()).toMatchObject({
      AccountLimit: { ConcurrentExecutions: 1000, UnreservedConcurrentExecutions: 998 },
      AccountUsage: { FunctionCount: 3, TotalCodeSize: expect.any(Number) },
    });
    expect(await refused(898)).toMatchObject({ ReservedConcurrentExecutions: 898 });
    expect((await settings()).AccountLimit?.UnreservedConcurrentExecutions).toBe(100);
  });

  it('cautions about a mapping that may run more at once than its function reserves, and refuses a stack reserving too much', async () => {
    const queue = { Type: 'AWS::SQS::Queue', Properties: {} };
    const limited = { ScalingConfig: { MaximumConcurrency: 2 } };
    const { runtime } = await start({
      // Two mappings sharing a reservation of 3, each within it, together over it.
      Shared: fn(work, 'shared', { ReservedConcurrentExecutions: 3 }),
      Left: queue,
      Right: queue,
      LeftTrigger: mapping('Left', 'Shared', limited),
      RightTrigger: mapping('Right', 'Shared', limited),
      // No maximum at all: Lambda's pollers scale far past any reservation.
      Open: fn(work, 'open', { ReservedConcurrentExecutions: 50 }),
      OpenTrigger: mapping('Left', 'Open'),
      // Within its reservation: no caution.
      Roomy: fn(work, 'roomy', { ReservedConcurrentExecutions: 2 }),
      RoomyTrigger: mapping('Right', 'Roomy', limited),
    });
    expect(runtime.stack.cautions).toEqual([
      expect.stringMatching(
        /^Capped reserves a concurrency of 1, and its mapping CappedTrigger may run 2 invocations at once: batches past 1 are throttled/,
      ),
      expect.stringMatching(
        /^Shared reserves a concurrency of 3, and its mappings LeftTrigger and RightTrigger may run 4 invocations at once between them: /,
      ),
      expect.stringMatching(
        /^Open reserves a concurrency of 50, and its mapping OpenTrigger has no maximum concurrency \(Lambda scales its pollers far past that\): /,
      ),
    ]);
    const dir = mkdtempSync(join(work, 'events-'));
    await expect(
      start({ Greedy: fn(dir, 'greedy', { ReservedConcurrentExecutions: 899 }) }),
    ).rejects.toThrow(
      /^function Greedy cannot be created: Specified ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of \[100\]\.$/,
    );
  });
});
