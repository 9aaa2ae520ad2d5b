/**
 * Lambda's API on the local edge, driven by the AWS SDK's own Lambda client: the stack's
 * functions listed and described, invoked with an SQS event (their partial batch response comes
 * back), a thrown error reported as Lambda reports it, a trigger paused and resumed, a
 * function's event invoke config (how Lambda retries its asynchronous invocations), the AWS
 * CLI when the machine has it, and a service the edge does not serve refused by name.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, GetTemplateCommand } from '@aws-sdk/client-cloudformation';
import {
  CreateEventSourceMappingCommand,
  DeleteEventSourceMappingCommand,
  GetEventSourceMappingCommand,
  GetFunctionConfigurationCommand,
  GetFunctionEventInvokeConfigCommand,
  InvokeCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
  ListFunctionsCommand,
  RequestTooLargeException,
  ResourceInUseException,
  ResourceNotFoundException,
  UpdateEventSourceMappingCommand,
  type UpdateEventSourceMappingCommandInput,
  UpdateFunctionConfigurationCommand,
} from '@aws-sdk/client-lambda';
import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import AWS from 'aws-sdk';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { DynamoOrderReader } from '../../adapters/dynamo-order-reader.ts';
import { queueDepth } from '../../adapters/sqs.ts';
import { LOCAL_CREDENTIALS } from '../../local/emulators.ts';
import { ASYNC_INVOKE_PAYLOAD_BYTES, INVOKE_PAYLOAD_BYTES } from '../../local/lambda-quotas.ts';
import { waitFor } from '../../local/net.ts';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { toSqsEvent } from '../../local/sqs-event.ts';
import { loadStack } from '../../local/template.ts';
import { awsCli, awsCliVersion, reportMissingAwsCli } from '../support/aws-cli.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { sharedDynamoLocal } from '../support/emulators.ts';
import { seedBatches } from '../support/fixtures.ts';
import { holdFirstCall } from '../support/hold.ts';
import { recordsOf, uniqueName } from '../support/pipeline.ts';

let runtime: LocalRuntime;
let lambda: LambdaClient;

beforeAll(async () => {
  const { assemblyDir, stackName } = inject('assembly');
  runtime = await startLocalRuntime({
    assemblyDir,
    stackName,
    localStackName: uniqueName('lambda-api'),
    dynamoLocal: sharedDynamoLocal(),
    retryDelaySeconds: 1,
  });
  lambda = new LambdaClient({
    endpoint: runtime.endpoint,
    region: runtime.region,
    credentials: LOCAL_CREDENTIALS,
  });
});
afterAll(async () => {
  await runtime?.stop();
});

const ingestName = () => {
  const fn = runtime.stack.functions.find((f) => f.logicalId.startsWith('IngestOrders'));
  if (!fn) throw new Error('no ingest function in the stack');
  return fn.name;
};

const mappingState = async (UUID: string | undefined) =>
  (await lambda.send(new GetEventSourceMappingCommand({ UUID }))).State;

const decode = (payload: Uint8Array | undefined): unknown =>
  JSON.parse(new TextDecoder().decode(payload));

reportMissingAwsCli('its Lambda test is');
const aws = (...args: string[]) => awsCli(runtime, ...args);

describe('Lambda’s API on the local edge', () => {
  it.skipIf(!awsCliVersion)(
    'answers the AWS CLI’s lambda list-functions, invoke and get-function-event-invoke-config',
    async () => {
      const listed = await aws('lambda', 'list-functions', '--output', 'json');
      expect(listed.status, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(ingestName());
      const out = join(mkdtempSync(join(tmpdir(), 'onceflow-aws-')), 'out.json');
      const event = JSON.stringify({ Records: [] });
      // Version 2 reads --payload as base64 unless told otherwise; version 1 takes it raw.
      const raw = awsCliVersion?.startsWith('aws-cli/1.')
        ? []
        : ['--cli-binary-format', 'raw-in-base64-out'];
      const invoked = await aws(
        'lambda',
        'invoke',
        '--function-name',
        ingestName(),
        ...raw,
        '--payload',
        event,
        out,
      );
      expect(invoked.status, invoked.stderr).toBe(0);
      expect(JSON.parse(invoked.stdout)).toMatchObject({ StatusCode: 200 });
      expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual({ batchItemFailures: [] });
      const finalizer = runtime.stack.functions.find((f) =>
        f.logicalId.startsWith('FinalizeHours'),
      );
      const config = await aws(
        'lambda',
        'get-function-event-invoke-config',
        '--function-name',
        finalizer?.name ?? '',
        '--output',
        'json',
      );
      expect(config.status, config.stderr).toBe(0);
      expect(JSON.parse(config.stdout)).toMatchObject({ MaximumRetryAttempts: 0 });
    },
  );

  it('lists and describes the stack’s functions', async () => {
    const { Functions = [] } = await lambda.send(new ListFunctionsCommand({}));
    const names = Functions.map((f) => f.FunctionName);
    for (const fn of runtime.stack.functions) expect(names).toContain(fn.name);
    const config = await lambda.send(
      new GetFunctionConfigurationCommand({ FunctionName: ingestName() }),
    );
    expect(config).toMatchObject({ Runtime: 'nodejs24.x', State: 'Active' });
    expect(config.Environment?.Variables?.TABLE_NAME).toBe(runtime.stack.outputs.TableName);
  });

  it('answers a scheduled function’s event invoke config, and none for a queue’s function', async () => {
    const finalizer = runtime.stack.functions.find((f) => f.logicalId.startsWith('FinalizeHours'));
    const config = await lambda.send(
      new GetFunctionEventInvokeConfigCommand({ FunctionName: finalizer?.name }),
    );
    expect(config).toMatchObject({
      FunctionArn: expect.stringMatching(new RegExp(`:function:${finalizer?.name}:\\$LATEST$`)),
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 300,
    });
    expect(config.LastModified).toBeInstanceOf(Date);
    await expect(
      lambda.send(new GetFunctionEventInvokeConfigCommand({ FunctionName: ingestName() })),
    ).rejects.toThrow(/doesn't have an EventInvokeConfig/);
  });

  it('invokes a function with an SQS event and returns its partial batch response', async () => {
    const [body = ''] = seedBatches();
    const event = toSqsEvent(recordsOf([{ body }], runtime.stack.outputs.OrdersQueueArn ?? ''));
    const out = await lambda.send(
      new InvokeCommand({ FunctionName: ingestName(), Payload: JSON.stringify(event) }),
    );
    expect(out.StatusCode).toBe(200);
    expect(out.FunctionError).toBeUndefined();
    expect(decode(out.Payload)).toEqual({ batchItemFailures: [] });
    const orders = await new DynamoOrderReader(
      runtime.clients.dynamo,
      runtime.stack.outputs.TableName ?? '',
    ).listOrders();
    expect(orders.length).toBeGreaterThan(0);
  });

  it('reports an error the handler throws as Lambda does, and a dry run without running it', async () => {
    const out = await lambda.send(
      new InvokeCommand({ FunctionName: ingestName(), Payload: JSON.stringify({ not: 'sqs' }) }),
    );
    expect(out.StatusCode).toBe(200);
    expect(out.FunctionError).toBe('Unhandled');
    // What the handler threw, by its own type, with its trace mapped to the sources.
    expect(decode(out.Payload)).toMatchObject({
      errorType: 'TypeError',
      errorMessage: expect.any(String),
      trace: expect.arrayContaining([expect.stringContaining('functions/ingest-orders.ts')]),
    });
    const dry = await lambda.send(
      new InvokeCommand({ FunctionName: ingestName(), InvocationType: 'DryRun' }),
    );
    expect(dry.StatusCode).toBe(204);
  });

  it('refuses a payload over Lambda’s quota with RequestTooLargeException: 6 MB, and 1 MB for Event', async () => {
    /** A JSON string payload of exactly `bytes` bytes. */
    const payloadOf = (bytes: number) => JSON.stringify('x'.repeat(bytes - 2));
    const invoke = (bytes: number, type: 'RequestResponse' | 'Event' | 'DryRun') =>
      lambda.send(
        new InvokeCommand({
          FunctionName: ingestName(),
          InvocationType: type,
          Payload: payloadOf(bytes),
        }),
      );
    await expect(invoke(INVOKE_PAYLOAD_BYTES + 1, 'RequestResponse')).rejects.toThrow(
      RequestTooLargeException,
    );
    await expect(invoke(ASYNC_INVOKE_PAYLOAD_BYTES + 1, 'Event')).rejects.toThrow(
      RequestTooLargeException,
    );
    // At the quota exactly: taken (a dry run, so that nothing runs on a payload that is no event).
    expect((await invoke(INVOKE_PAYLOAD_BYTES, 'DryRun')).StatusCode).toBe(204);
  });

  it('returns the invocation’s log tail with LogType Tail, as Lambda does', async () => {
    const [, body = ''] = seedBatches();
    const event = toSqsEvent(recordsOf([{ body }], runtime.stack.outputs.OrdersQueueArn ?? ''));
    const ok = await lambda.send(
      new InvokeCommand({
        FunctionName: ingestName(),
        Payload: JSON.stringify(event),
        LogType: 'Tail',
      }),
    );
    const tail = Buffer.from(ok.LogResult ?? '', 'base64').toString('utf8');
    expect(tail).toMatch(/^START RequestId: [\w-]+ Version: \$LATEST\n/);
    expect(tail).toMatch(/\nEND RequestId: [\w-]+\nREPORT RequestId: [\w-]+\tDuration: [\d.]+ ms/);
    // The function's own structured log lines, between START and END, under the same request id:
    // the one its context was given, as Lambda's is.
    // Powertools' service is the stack's name, as synthesized.
    expect(tail).toContain(`"service":"${inject('assembly').stackName}"`);
    const requestId = /^START RequestId: ([\w-]+)/.exec(tail)?.[1];
    expect(tail).toContain(`"function_request_id":"${requestId}"`);
    expect(ok.$metadata.requestId).toBe(requestId);

    const failed = await lambda.send(
      new InvokeCommand({
        FunctionName: ingestName(),
        Payload: JSON.stringify({ not: 'sqs' }),
        LogType: 'Tail',
      }),
    );
    const failedTail = Buffer.from(failed.LogResult ?? '', 'base64').toString('utf8');
    expect(failedTail).toMatch(/\tERROR\tInvoke Error \t\{"errorType":/);
    // Without LogType there is no tail.
    const plain = await lambda.send(
      new InvokeCommand({ FunctionName: ingestName(), Payload: JSON.stringify({ not: 'sqs' }) }),
    );
    expect(plain.LogResult).toBeUndefined();
  });

  it('pauses and resumes a trigger with UpdateEventSourceMapping', async () => {
    const { EventSourceMappings = [] } = await lambda.send(
      new ListEventSourceMappingsCommand({ FunctionName: ingestName() }),
    );
    expect(EventSourceMappings).toHaveLength(1);
    const [mapping] = EventSourceMappings;
    expect(mapping).toMatchObject({ State: 'Enabled', BatchSize: 10 });
    const paused = await lambda.send(
      new UpdateEventSourceMappingCommand({ UUID: mapping?.UUID, Enabled: false }),
    );
    // Lambda answers with the transition; nothing runs, so it has ended by the next read.
    expect(paused.State).toBe('Disabling');
    expect(paused.StateTransitionReason).toBe('USER_INITIATED');
    expect(paused.LastModified?.getTime()).toBeGreaterThanOrEqual(
      mapping?.LastModified?.getTime() ?? Number.POSITIVE_INFINITY,
    );
    expect(await mappingState(mapping?.UUID)).toBe('Disabled');
    // A message sent while paused waits in the queue: the queues never drain.
    const [, second = ''] = seedBatches();
    await runtime.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: runtime.stack.outputs.OrdersQueueUrl,
        MessageBody: second,
      }),
    );
    await expect(runtime.drain({ timeoutMs: 2_000 })).rejects.toThrow();
    const resumed = await lambda.send(
      new UpdateEventSourceMappingCommand({ UUID: mapping?.UUID, Enabled: true }),
    );
    expect(resumed.State).toBe('Enabling');
    expect(await mappingState(mapping?.UUID)).toBe('Enabled');
    await runtime.drain({ timeoutMs: DEADLINE_MS });
  });

  it('changes a trigger’s batch size, maximum concurrency, response types and filters with UpdateEventSourceMapping, and refuses what Lambda refuses', async () => {
    const { EventSourceMappings: [mapping] = [] } = await lambda.send(
      new ListEventSourceMappingsCommand({ FunctionName: ingestName() }),
    );
    const UUID = mapping?.UUID;
    expect(mapping).toMatchObject({ BatchSize: 10, ScalingConfig: { MaximumConcurrency: 10 } });
    const { logicalId = '' } =
      runtime.stack.mappings.find((m) => m.functionLogicalId.startsWith('IngestOrders')) ?? {};
    const poller = runtime.pollers.get(logicalId);
    expect(poller).toBeDefined();
    const updated = await lambda.send(
      new UpdateEventSourceMappingCommand({
        UUID,
        BatchSize: 4,
        ScalingConfig: { MaximumConcurrency: 2 },
      }),
    );
    expect(updated).toMatchObject({
      State: 'Updating',
      BatchSize: 4,
      ScalingConfig: { MaximumConcurrency: 2 },
    });
    expect(await mappingState(UUID)).toBe('Enabled');
    const slowed = {
      batchSize: 4,
      batchingWindowSeconds: 0,
      maxConcurrency: 2,
      reportBatchItemFailures: true,
      filters: [],
    };
    expect(poller?.settings).toEqual(slowed);

    const refusal = (input: Omit<UpdateEventSourceMappingCommandInput, 'UUID'>) =>
      lambda.send(new UpdateEventSourceMappingCommand({ UUID, ...input })).catch((e) => e);
    expect(await refusal({ BatchSize: 20 })).toMatchObject({
      name: 'InvalidParameterValueException',
      message:
        'Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10',
    });
    expect(await refusal({ ScalingConfig: { MaximumConcurrency: 1 } })).toMatchObject({
      name: 'ValidationException',
      message: expect.stringContaining("Value '1' at 'scalingConfig.maximumConcurrency'"),
    });
    expect(await refusal({ FunctionName: 'another' })).toMatchObject({
      name: 'InvalidParameterValueException',
      message: expect.stringContaining('changes only Enabled, BatchSize'),
    });
    // Nothing refused was applied.
    expect(poller?.settings).toEqual(slowed);

    // An empty ScalingConfig removes the cap: the runtime's default concurrency, none shown.
    const uncapped = await lambda.send(
      new UpdateEventSourceMappingCommand({ UUID, ScalingConfig: {} }),
    );
    expect(uncapped.ScalingConfig).toBeUndefined();
    expect(poller?.settings.maxConcurrency).toBe(5);

    // Partial batch responses off, as a mapping recreated by hand may be, and on again.
    const off = await lambda.send(
      new UpdateEventSourceMappingCommand({ UUID, FunctionResponseTypes: [] }),
    );
    expect(off).toMatchObject({ State: 'Updating', FunctionResponseTypes: [] });
    expect(poller?.settings.reportBatchItemFailures).toBe(false);
    expect(
      (await lambda.send(new GetEventSourceMappingCommand({ UUID }))).FunctionResponseTypes,
    ).toEqual([]);
    await lambda.send(
      new UpdateEventSourceMappingCommand({
        UUID,
        BatchSize: 10,
        ScalingConfig: { MaximumConcurrency: 10 },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      }),
    );
    expect(poller?.settings.reportBatchItemFailures).toBe(true);

    // Filters, applied from the next receive on; an invalid pattern refused in Lambda's words, one
    // the local runtime cannot apply refused by name; {} removes them.
    const Filters = [{ Pattern: '{"body":{"batchId":[{"prefix":"keep-"}]}}' }];
    const filtered = await lambda.send(
      new UpdateEventSourceMappingCommand({ UUID, FilterCriteria: { Filters } }),
    );
    expect(filtered.FilterCriteria).toEqual({ Filters });
    expect(poller?.settings.filters).toEqual([{ body: { batchId: [{ prefix: 'keep-' }] } }]);
    expect(await refusal({ FilterCriteria: { Filters: [{ Pattern: '{"body":' }] } })).toMatchObject(
      { name: 'InvalidParameterValueException', message: 'Invalid filter pattern definition.' },
    );
    expect(
      await refusal({
        FilterCriteria: { Filters: [{ Pattern: '{"attributes":{"SenderId":["x"]}}' }] },
      }),
    ).toMatchObject({
      name: 'InvalidParameterValueException',
      message: expect.stringContaining(
        'The local runtime cannot apply these FilterCriteria: a filter on attributes',
      ),
    });
    expect(poller?.settings.filters).toHaveLength(1);
    const unfiltered = await lambda.send(
      new UpdateEventSourceMappingCommand({ UUID, FilterCriteria: {} }),
    );
    expect(unfiltered.FilterCriteria).toBeUndefined();
    expect(poller?.settings.filters).toEqual([]);
  });

  it('reads Disabling while a batch received before the pause runs, refuses another change until it has finished, and dates Disabled from then', async () => {
    const { EventSourceMappings: [mapping] = [] } = await lambda.send(
      new ListEventSourceMappingsCommand({ FunctionName: ingestName() }),
    );
    const UUID = mapping?.UUID;
    const hold = holdFirstCall(runtime, 'IngestOrders', (call) => call.service === 'dynamodb');
    onTestFinished(hold.release);
    const [, , third = ''] = seedBatches();
    await runtime.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: runtime.stack.outputs.OrdersQueueUrl,
        MessageBody: third,
      }),
    );
    await hold.reached();

    const paused = await lambda.send(new UpdateEventSourceMappingCommand({ UUID, Enabled: false }));
    expect(paused.State).toBe('Disabling');
    expect(await mappingState(UUID)).toBe('Disabling');
    const refused = lambda.send(new UpdateEventSourceMappingCommand({ UUID, Enabled: true }));
    await expect(refused).rejects.toBeInstanceOf(ResourceInUseException);
    await expect(refused).rejects.toThrow(/it is Disabling\. Try again once it is Disabled/);

    const lastModified = async () =>
      (await lambda.send(new GetEventSourceMappingCommand({ UUID }))).LastModified?.getTime() ?? 0;
    const pausedAt = await lastModified();

    // The running batch finishes, its message deleted: pausing stops receiving, not running.
    const releasedAt = Date.now();
    hold.release();
    await waitFor(async () => (await mappingState(UUID)) === 'Disabled', {
      timeoutMs: DEADLINE_MS,
      what: 'the mapping to be disabled',
    });
    // As on AWS, LastModified moves when the state settles: Disabled since the batch finished.
    expect(pausedAt).toBeLessThan(releasedAt);
    expect(await lastModified()).toBeGreaterThanOrEqual(releasedAt);
    const depth = await queueDepth(runtime.clients.sqs, runtime.stack.outputs.OrdersQueueUrl ?? '');
    expect(depth).toMatchObject({ visible: 0, inFlight: 0 });
    const resumed = await lambda.send(new UpdateEventSourceMappingCommand({ UUID, Enabled: true }));
    expect(resumed.State).toBe('Enabling');
    await runtime.drain({ timeoutMs: DEADLINE_MS });
  });

  it('applies a batch whose body carries emoji, sent through SQS as any producer would', async () => {
    const body = JSON.stringify({
      batchId: uniqueName('emoji'),
      events: [
        {
          eventId: 'e-\u{1F4E6}',
          orderId: 'o-\u{1F680}',
          customerId: 'c-\u{1F600}',
          status: 'placed',
          amount: '3.00',
          currency: 'EUR',
          eventTime: '2026-10-01T09:00:00Z',
        },
      ],
    });
    expect(body).toContain('\u{1F600}'); // raw, not escaped as \ud83d…
    await runtime.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: runtime.stack.outputs.OrdersQueueUrl, MessageBody: body }),
    );
    await runtime.drain({ timeoutMs: DEADLINE_MS });
    const orders = await new DynamoOrderReader(
      runtime.clients.dynamo,
      runtime.stack.outputs.TableName ?? '',
    ).listOrders();
    expect(orders.find((o) => o.orderId === 'o-\u{1F680}')?.customerId).toBe('c-\u{1F600}');
  });

  it('changes a function’s environment and timeout with UpdateFunctionConfiguration from its next invocation on, and refuses what Lambda refuses', async () => {
    const FunctionName = ingestName();
    const before = await lambda.send(new GetFunctionConfigurationCommand({ FunctionName }));
    const variables = before.Environment?.Variables ?? {};
    const { TABLE_NAME, ...withoutTable } = variables;
    expect(TABLE_NAME).toBe(runtime.stack.outputs.TableName);
    const [body = ''] = seedBatches();
    const invoke = async () =>
      lambda.send(
        new InvokeCommand({
          FunctionName,
          Payload: JSON.stringify(
            toSqsEvent(recordsOf([{ body }], runtime.stack.outputs.OrdersQueueArn ?? '')),
          ),
        }),
      );

    const updated = await lambda.send(
      new UpdateFunctionConfigurationCommand({
        FunctionName,
        Environment: { Variables: withoutTable },
        Timeout: 45,
      }),
    );
    expect(updated.Environment?.Variables).toEqual(withoutTable);
    expect(updated.Timeout).toBe(45);
    expect(updated.LastModified).not.toBe(before.LastModified);
    const failed = await invoke();
    expect(failed.FunctionError).toBe('Unhandled');
    expect(JSON.stringify(decode(failed.Payload))).toContain('TABLE_NAME');

    const refusals: [Record<string, unknown>, RegExp][] = [
      [
        { Environment: { Variables: { ...variables, AWS_REGION: 'x' } } },
        /reserved keys.*AWS_REGION/,
      ],
      [{ Environment: { Variables: { 'no-dash': 'x' } } }, /must satisfy the pattern/],
      [{ MemorySize: 1024 }, /only the Environment and Timeout/],
      [{ Timeout: 901 }, /less than or equal to 900/],
    ];
    for (const [change, message] of refusals)
      await expect(
        lambda.send(new UpdateFunctionConfigurationCommand({ FunctionName, ...change })),
      ).rejects.toThrow(message);

    await lambda.send(
      new UpdateFunctionConfigurationCommand({
        FunctionName,
        Environment: { Variables: variables },
        Timeout: before.Timeout,
      }),
    );
    const after = await lambda.send(new GetFunctionConfigurationCommand({ FunctionName }));
    expect([after.Environment?.Variables, after.Timeout]).toEqual([variables, before.Timeout]);
    const ok = await invoke();
    expect(ok.FunctionError).toBeUndefined();
    expect(decode(ok.Payload)).toEqual({ batchItemFailures: [] });
  });

  it('deletes a trigger and creates it again with Delete and CreateEventSourceMapping, its messages waiting meanwhile, and refuses what Lambda refuses', async () => {
    const FunctionName = ingestName();
    const EventSourceArn = runtime.stack.outputs.OrdersQueueArn ?? '';
    const mappings = async () =>
      (await lambda.send(new ListEventSourceMappingsCommand({ FunctionName })))
        .EventSourceMappings ?? [];
    const [mapping] = await mappings();
    await expect(
      lambda.send(new CreateEventSourceMappingCommand({ FunctionName, EventSourceArn })),
    ).rejects.toThrow(new RegExp(`already exists.*UUID ${mapping?.UUID}`));

    const deleted = await lambda.send(new DeleteEventSourceMappingCommand({ UUID: mapping?.UUID }));
    expect(deleted.State).toBe('Deleting');
    expect(await mappings()).toEqual([]);
    await expect(
      lambda.send(new GetEventSourceMappingCommand({ UUID: mapping?.UUID })),
    ).rejects.toBeInstanceOf(ResourceNotFoundException);
    const batchId = uniqueName('recreated');
    const [first = ''] = seedBatches();
    await runtime.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: runtime.stack.outputs.OrdersQueueUrl,
        MessageBody: JSON.stringify({ ...JSON.parse(first), batchId }),
      }),
    );
    // Nothing polls the queue now: the batch waits there, visible. (The deleted trigger's last
    // long poll, abandoned, takes it and the edge gives it back: well within the 3 minutes of
    // the queue's visibility timeout that it would otherwise stay hidden.)
    await waitFor(
      async () =>
        (await queueDepth(runtime.clients.sqs, runtime.stack.outputs.OrdersQueueUrl ?? ''))
          .visible === 1,
      { timeoutMs: 60_000, what: 'the batch to wait visible in the queue' },
    );

    const refusals: [Record<string, unknown>, RegExp][] = [
      [
        { EventSourceArn: 'arn:aws:sqs:us-east-1:000000000000:elsewhere' },
        /only its stack's queues/,
      ],
      [{ FunctionName: 'no-such-function' }, /Function does not exist/],
      [{ BatchSize: 20_000 }, /BatchSize|batch size/i],
      [{ StartingPosition: 'LATEST' }, /creates SQS mappings from EventSourceArn/],
    ];
    for (const [change, message] of refusals)
      await expect(
        lambda.send(
          new CreateEventSourceMappingCommand({ FunctionName, EventSourceArn, ...change }),
        ),
      ).rejects.toThrow(message);
    expect(await mappings()).toEqual([]);

    const created = await lambda.send(
      // No BatchSize nor batching window: Lambda's defaults for SQS, 10 messages and none.
      new CreateEventSourceMappingCommand({
        FunctionName,
        EventSourceArn,
        ScalingConfig: { MaximumConcurrency: 10 },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      }),
    );
    expect(created).toMatchObject({
      State: 'Creating',
      BatchSize: 10,
      MaximumBatchingWindowInSeconds: 0,
      EventSourceArn,
    });
    expect(created.UUID).not.toBe(mapping?.UUID);
    expect(await mappingState(created.UUID)).toBe('Enabled');
    expect((await mappings()).map((m) => [m.UUID, m.FunctionResponseTypes])).toEqual([
      [created.UUID, ['ReportBatchItemFailures']],
    ]);
    await runtime.drain({ timeoutMs: DEADLINE_MS });
    const ledger = await runtime.clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: runtime.stack.outputs.OrdersQueueUrl,
        AttributeNames: ['ApproximateNumberOfMessages'],
      }),
    );
    expect(ledger.Attributes?.ApproximateNumberOfMessages).toBe('0');
  });

  it('answers an unknown function with ResourceNotFoundException', async () => {
    await expect(
      lambda.send(new InvokeCommand({ FunctionName: 'no-such-function', Payload: '{}' })),
    ).rejects.toBeInstanceOf(ResourceNotFoundException);
  });

  it('refuses a service it does not serve by name, never with another service’s answer', async () => {
    const kinesis = new AWS.Kinesis({
      endpoint: runtime.endpoint,
      region: runtime.region,
      credentials: new AWS.Credentials(LOCAL_CREDENTIALS),
      maxRetries: 0,
    });
    await expect(kinesis.listStreams().promise()).rejects.toThrow(/does not serve kinesis/);
  });
});

describe('CloudFormation’s GetTemplate on the local edge', () => {
  it('answers the template the stack was deployed from, and an unknown stack as CloudFormation does', async () => {
    const cloudformation = new CloudFormationClient({
      endpoint: runtime.endpoint,
      region: runtime.region,
      credentials: LOCAL_CREDENTIALS,
    });
    const { assemblyDir, stackName } = inject('assembly');
    const { TemplateBody = '', StagesAvailable } = await cloudformation.send(
      new GetTemplateCommand({ StackName: runtime.stack.stackName }),
    );
    expect(JSON.parse(TemplateBody)).toEqual(loadStack(assemblyDir, stackName).template);
    expect(StagesAvailable).toEqual(['Original', 'Processed']);
    await expect(
      cloudformation.send(new GetTemplateCommand({ StackName: uniqueName('none') })),
    ).rejects.toThrow(/Stack with id .* does not exist/);
  });
});
