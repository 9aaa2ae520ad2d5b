import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
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
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import {
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import type { Command } from 'commander';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { queueDepth } from '../../adapters/sqs.ts';
import { cli } from '../../cli/main.ts';
import { referenceModel } from '../../harness/model.ts';
import { type Emulators, LOCAL_CREDENTIALS, startEmulators } from '../../local/emulators.ts';
import { waitFor } from '../../local/net.ts';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { readLocalState } from '../../local/state.ts';
import { hourObjectKey } from '../../shared/keys.ts';
import { bodyOfSize } from '../support/bounds.ts';
import {
  follow,
  onceflow,
  ROOT,
  recordState as recordStateIn,
  spawnOnceflow,
} from '../support/cli.ts';
import { DEADLINE_MS, DEADLINE_S } from '../support/deadlines.ts';
import { sharedDynamoLocal } from '../support/emulators.ts';
import { expectedHourly, expectedOrders, seedBatches } from '../support/fixtures.ts';
import { parseBatch, parseJson } from '../support/json.ts';
import { stateViews, uniqueName } from '../support/pipeline.ts';

const SEED = join(ROOT, 'test', 'fixtures', 'seed-orders', 'batches.ndjson');

let emulators: Emulators;
const assembly = inject('assembly');
const dir = mkdtempSync(join(tmpdir(), 'onceflow-cli-'));

beforeAll(async () => {
  emulators = await startEmulators({ dynamoLocal: sharedDynamoLocal() });
});
afterAll(async () => {
  await emulators?.stop();
});

const recordState = (runtime: LocalRuntime) => recordStateIn(runtime, dir);

/** A fresh copy of the stack on the shared emulators, and a CLI bound to it as `--target local`. */
const stack = async () => {
  const runtime: LocalRuntime = await startLocalRuntime({
    assemblyDir: assembly.assemblyDir,
    stackName: assembly.stackName,
    localStackName: uniqueName('cli'),
    emulators,
    retryDelaySeconds: 1,
    // Where `onceflow logs` looks: beside the state file, as `npm start` writes them.
    logDir: join(dir, 'logs'),
  });
  const state = recordState(runtime);
  const cli = (...args: string[]) => onceflow(['--local-state', state, ...args]);
  const { outputs } = runtime.stack;
  const views = stateViews(runtime.clients, outputs.TableName ?? '', outputs.BucketName ?? '');
  return { runtime, cli, outputs, views, [Symbol.asyncDispose]: () => runtime.stop() };
};

/** What these tests read of `status --json` and `rejects --json`. */
const StatusSchema = v.object({
  ledger: v.unknown(),
  queues: v.array(v.object({ name: v.string(), visible: v.number() })),
});
/** What these tests read of `aggregates --json`. */
const HoursSchema = v.array(v.object({ hour: v.string() }));
const RejectsSchema = v.array(
  v.object({ reason: v.string(), detail: v.string(), body: v.string() }),
);

const essence = (hours: { hour: string; events: number; byStatus: unknown }[]) =>
  hours.map(({ hour, events, byStatus }) => ({ hour, events, byStatus }));

describe('onceflow against the local stack', () => {
  it('applies the reference stream with send and drain, and reads it back with orders and aggregates', async () => {
    await using s = await stack();
    const sent = await s.cli('send', SEED);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toContain('sent 4 messages');
    expect((await s.cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);
    const orders = await s.cli('orders', '--json');
    expect(JSON.parse(orders.stdout)).toEqual(expectedOrders());
    const aggregates = await s.cli('aggregates', '--json');
    expect(essence(JSON.parse(aggregates.stdout))).toEqual(expectedHourly());
    const window = await s.cli(
      'aggregates',
      '--json',
      '--from',
      '2026-10-01T10:00:00Z',
      '--to',
      '2026-10-01T12:00:00Z',
    );
    expect(parseJson(HoursSchema, window.stdout).map((h) => h.hour)).toEqual([
      '2026-10-01T10:00:00Z',
      '2026-10-01T11:00:00Z',
    ]);
    const chart = await s.cli('aggregates', '--chart');
    expect(chart.stdout).toMatch(/2026-10-01 09h │█+ 4/);
    const table = await s.cli('orders');
    expect(table.stdout).toMatch(/1001\s+│ C01\s+│ paid/);
    // Why 1001 is paid: both its events, each counted by the batch that first carried it.
    const history = await s.cli('orders', '--order-id', '1001', '--events');
    expect(history.stdout).toMatch(
      /e-1001-placed +│ placed +│ +25\.50 │ USD +│ make-orders-1 │ +│/,
    );
    expect(history.stdout).toMatch(
      /e-1001-paid +│ paid +│ +25\.50 │ USD +│ make-orders-2 │ ◀ state │/,
    );
    expect((await s.cli('verify')).stdout).toContain('4 hours checked, 0 differences');
    const batch = await s.cli('batch', 'make-orders-1', '--events');
    expect(batch.stdout).toContain('batch make-orders-1: applied (1 of 1 part committed)');
    expect(batch.stdout).toContain(
      'events      3: 3 counted, 0 duplicates, 0 conflicts, 0 too late, 0 unclaimed',
    );
    expect(batch.stdout).toMatch(/1002\s+│ e-1002-placed\s+│ 2026-10-01T09:40:00Z\s+│ counted/);
    // Several at once: one JSON entry per id, an unknown one named on stderr and exit 1.
    const several = await s.cli('batch', 'make-orders-2', 'make-orders-9', '--json');
    expect(several.code).toBe(1);
    expect(several.stderr).toContain('batch make-orders-9 is not in the ledger');
    expect(
      parseJson(v.array(v.object({ batchId: v.string(), state: v.string() })), several.stdout),
    ).toEqual([
      { batchId: 'make-orders-2', state: 'applied' },
      { batchId: 'make-orders-9', state: 'absent' },
    ]);

    // The finalizer runs now, with its schedule's event: the latest event is 12:40, so the
    // watermark (10:30) has passed 09:00's end only.
    const finalized = await s.cli('invoke', 'finalize', '--logs');
    expect(finalized.code, finalized.stderr).toBe(0);
    expect(finalized.stdout).toContain(
      'finalizer: watermark 2026-10-01T10:30:00.000Z; finalized 2026-10-01T09:00:00Z (rev 2); 2026-10-01T10:00:00Z and later still open',
    );
    expect(finalized.stdout).toMatch(/^START RequestId: /);
    const hours = parseJson(
      v.array(v.object({ hour: v.string(), state: v.string(), amendments: v.number() })),
      (await s.cli('hours', '--json')).stdout,
    );
    expect(hours.map((h) => [h.hour.slice(11, 13), h.state, h.amendments])).toEqual([
      ['09', 'final', 0],
      ['10', 'open', 0],
      ['11', 'open', 0],
      ['12', 'open', 0],
    ]);
    expect((await s.cli('hours')).stdout).toContain('4 hours: 3 open, 1 final, 0 amended');
    const final = parseJson(
      HoursSchema,
      (await s.cli('aggregates', '--final-only', '--json')).stdout,
    );
    expect(final.map((h) => h.hour)).toEqual(['2026-10-01T09:00:00Z']);
    expect((await s.cli('verify')).stdout).toContain('4 hours checked, 0 differences');
  });

  it('changes nothing when the whole archive is replayed', async () => {
    await using s = await stack();
    await s.cli('send', SEED);
    await s.cli('drain');
    const before = { items: await s.views.tableItems(), hours: essence(await s.views.hourly()) };
    // Several requests in flight: in no particular order, which changes nothing either.
    const replayed = await s.cli(
      'replay',
      'archive',
      '--from',
      '2026-09-30',
      '--to',
      '2026-10-03',
      '--in-flight',
      '4',
    );
    expect(replayed.stdout).toContain('re-sent 4 archived batches');
    // And by batch id: the ids given, each found through its ledger entry; an unknown one named.
    const byId = await s.cli(
      'replay',
      'archive',
      '--batch-id',
      'make-orders-2',
      'make-orders-1',
      'b-never-sent',
    );
    expect(byId.code).toBe(1);
    expect(byId.stdout).toContain('re-sent 2 archived batches');
    expect(byId.stderr).toContain('batch b-never-sent is not in the ledger');
    expect((await s.cli('drain')).code).toBe(0);
    expect({ items: await s.views.tableItems(), hours: essence(await s.views.hourly()) }).toEqual(
      before,
    );
    const status = await s.cli('status', '--json');
    expect(JSON.parse(status.stdout).ledger).toMatchObject({ applied: 4, pending: 0 });
  });

  it('sends, applies and replays bodies at the queue’s maximum size, naming the one line over it', async () => {
    await using s = await stack();
    const prefix = uniqueName('max');
    const big = [1, 2, 3].map((n) => bodyOfSize(`${prefix}-${n}`, 1_048_576));
    const tooBig = bodyOfSize(`${prefix}-over`, 1_048_577);
    const file = join(dir, `${prefix}.ndjson`);
    // A blank line before the one over: skipped, and the report names the file's own line.
    writeFileSync(file, [big[0]?.body, '', tooBig.body, big[1]?.body, big[2]?.body].join('\n'));

    const sent = await s.cli('send', file);
    expect(sent.code).toBe(1);
    expect(sent.stdout).toContain('sent 3 messages');
    expect(sent.stderr).toContain(
      'line 3 was not sent: the body is 1048577 bytes; the queue takes at most 1048576',
    );
    expect((await s.cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);
    const model = referenceModel(big);
    expect(await s.views.orders()).toEqual(model.orders);
    expect(essence(await s.views.hourly())).toEqual(model.hourly);
    expect((await s.cli('verify')).stdout).toContain('1 hour checked, 0 differences');

    const replayed = await s.cli('replay', 'archive', '--from', '2026-10-01', '--to', '2026-10-02');
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toContain('re-sent 3 archived batches');
    expect((await s.cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);
    expect(essence(await s.views.hourly())).toEqual(model.hourly);
    const status = parseJson(StatusSchema, (await s.cli('status', '--json')).stdout);
    expect(status.ledger).toMatchObject({ applied: 3, pending: 0 });
    expect(status.queues.every((q) => q.visible === 0)).toBe(true);
  });

  it('rehearses a table restore with drill snapshot and drill restore, every check passing', async () => {
    await using s = await stack();
    expect((await s.cli('send', SEED)).code).toBe(0);
    expect((await s.cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);
    const snapshot = await s.cli('drill', 'snapshot');
    expect(snapshot.code).toBe(0);
    const at = /--at (\S+)/.exec(snapshot.stdout)?.[1] ?? '';
    // After the copy: a late batch, its events a week old.
    const late = join(dir, `${uniqueName('late')}.ndjson`);
    writeFileSync(
      late,
      `${JSON.stringify({
        batchId: uniqueName('late'),
        events: [
          {
            eventId: 'late-1',
            orderId: 'late-order',
            customerId: 'C9',
            status: 'paid',
            amount: '12.00',
            currency: 'EUR',
            eventTime: '2026-09-24T08:15:00Z',
          },
        ],
      })}\n`,
    );
    expect((await s.cli('send', late)).code).toBe(0);
    expect((await s.cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);
    const before = { orders: await s.views.orders(), hourly: await s.views.hourly() };
    expect(before.hourly.map((h) => h.hour)).toContain('2026-09-24T08:00:00Z');

    const drill = await s.cli('drill', 'restore', '--at', at, '--timeout', DEADLINE_S);
    expect(drill.stderr).toBe('');
    expect(drill.code).toBe(0);
    expect(drill.stdout).toContain(`replay archive --received-from ${at} --pending`);
    expect(drill.stdout).toContain('reconcile --from 2026-09-24T08:00:00Z');
    expect(drill.stdout).toContain('the drill passed');
    expect({ orders: await s.views.orders(), hourly: await s.views.hourly() }).toEqual(before);
  });

  it('uses a named profile of the shared AWS files with --profile, and names one that is missing', async () => {
    await using s = await stack();
    const config = join(dir, `${uniqueName('aws-config')}`);
    const credentials = join(dir, `${uniqueName('aws-credentials')}`);
    writeFileSync(config, '[profile drill]\nregion = us-east-1\n');
    writeFileSync(
      credentials,
      '[drill]\naws_access_key_id = drill\naws_secret_access_key = drill\n',
    );
    const files = { AWS_CONFIG_FILE: config, AWS_SHARED_CREDENTIALS_FILE: credentials };
    const common = ['--target', 'localstack', '--endpoint', s.runtime.endpoint];
    const stackName = ['--stack-name', s.runtime.stack.stackName];
    const ok = await onceflow([...common, ...stackName, '--profile', 'drill', 'status', '--json'], {
      ...files,
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
    });
    expect(ok.stderr).toBe('');
    expect(JSON.parse(ok.stdout)).toMatchObject({ ledger: { applied: 0, pending: 0 } });
    const missing = await onceflow(
      [...common, ...stackName, '--profile', 'no-such-profile', 'status'],
      { ...files, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' },
    );
    expect(missing.code, missing.stderr).toBe(1);
    expect(missing.stderr).toContain('no-such-profile');
  });

  it('checks a restored table with table check, and turns on its TTL with --fix', async () => {
    await using s = await stack();
    const own = await s.cli('table', 'check', '--table', s.outputs.TableName ?? '');
    expect(own.code).toBe(0);
    expect(own.stdout).toContain('✓ key schema: pk HASH S, sk RANGE S');
    expect(own.stdout).toContain('✓ TTL on expiresAt: ENABLED');
    expect(own.stdout).toContain('point-in-time recovery: not available on this endpoint');
    // A restored table has the key, but not the TTL: refused, then fixed.
    const restored = uniqueName('restored');
    await s.runtime.clients.dynamo.send(
      new CreateTableCommand({
        TableName: restored,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
      }),
    );
    const before = await s.cli('table', 'check', '--table', restored);
    expect(before.code).toBe(1);
    expect(before.stdout).toContain('✗ TTL on expiresAt');
    const fixed = await s.cli('table', 'check', '--table', restored, '--fix');
    expect(fixed.code).toBe(0);
    expect(fixed.stdout).toContain(`${restored} can serve the stack`);
    const missing = await s.cli('table', 'check', '--table', uniqueName('none'));
    expect(missing.code, missing.stderr).toBe(1);
    expect(missing.stderr).toContain('does not exist');
  });

  it('empties a DLQ with replay dlq and converges to the expected state', async () => {
    await using s = await stack();
    await s.runtime.clients.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: s.outputs.OrdersDlqUrl,
        Entries: seedBatches().map((MessageBody, i) => ({ Id: String(i), MessageBody })),
      }),
    );
    const status = parseJson(StatusSchema, (await s.cli('status', '--json')).stdout);
    expect(status.queues.find((q) => q.name === 'orders DLQ')?.visible).toBe(4);
    // Looked at first: listed with their batches, and left where they are.
    const planned = await s.cli('replay', 'dlq', '--dry-run');
    expect(planned.code).toBe(0);
    expect(planned.stdout).toMatch(/batch make-orders-3\s+│ not in the ledger/);
    expect(planned.stdout).toContain('4 messages read and left in the orders DLQ');
    // One body tried first with invoke, from the listing's JSON: applied, and left in the DLQ.
    const listed = await s.cli('replay', 'dlq', '--dry-run', '--json');
    const DlqSchema = v.array(v.object({ batchId: v.optional(v.string()), body: v.string() }));
    const tried = parseJson(DlqSchema, listed.stdout).find((e) => e.batchId === 'make-orders-1');
    const triedFile = join(dir, `${uniqueName('dlq-try')}.ndjson`);
    writeFileSync(triedFile, tried?.body ?? '');
    expect((await s.cli('invoke', 'ingest', triedFile)).code).toBe(0);
    expect((await s.cli('replay', 'dlq', '--dry-run')).stdout).toMatch(
      /batch make-orders-1\s+│ applied/,
    );
    // Paced, as after an incident with a large DLQ: the move task carries the rate.
    const replayed = await s.cli('replay', 'dlq', '--queue', 'orders', '--rate', '2');
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stderr).toContain('moving at most 2 messages a second');
    expect(replayed.stdout).toContain('moved 4 messages back to the orders queue');
    const tasks = await s.runtime.clients.sqs.send(
      new ListMessageMoveTasksCommand({ SourceArn: s.outputs.OrdersDlqArn }),
    );
    expect(tasks.Results?.map((t) => [t.Status, t.MaxNumberOfMessagesPerSecond])).toEqual([
      ['COMPLETED', 2],
    ]);
    await s.cli('drain');
    expect(await s.views.orders()).toEqual(expectedOrders());
    expect(essence(await s.views.hourly())).toEqual(expectedHourly());
    const after = parseJson(StatusSchema, (await s.cli('status', '--json')).stdout);
    expect(after.queues.every((q) => q.visible === 0)).toBe(true);
  });

  it('waits for a peeked DLQ message to become visible again and moves it with replay dlq', async () => {
    await using s = await stack();
    const dlq = s.outputs.OrdersDlqUrl ?? '';
    const sqs = s.runtime.clients.sqs;
    await sqs.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: seedBatches()[0] }));
    // Someone peeks at it: in flight for 15 s, where a move task cannot take it (long enough to
    // still be in flight when the CLI's process has started on a busy machine).
    const peeked = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: dlq, VisibilityTimeout: 15, WaitTimeSeconds: 1 }),
    );
    expect(peeked.Messages).toHaveLength(1);
    const replayed = await s.cli('replay', 'dlq', '--queue', 'orders');
    expect(replayed.stderr).toContain(
      '1 message(s) in flight or delayed in the orders DLQ: waiting up to',
    );
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toContain('moved 1 message back to the orders queue');
    expect(await queueDepth(sqs, dlq)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it('says how many DLQ messages it could not move and why, and exits 1, when they stay in flight', async () => {
    await using s = await stack();
    const dlq = s.outputs.OrdersDlqUrl ?? '';
    const sqs = s.runtime.clients.sqs;
    await sqs.send(
      new SetQueueAttributesCommand({ QueueUrl: dlq, Attributes: { VisibilityTimeout: '1' } }),
    );
    await sqs.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: seedBatches()[0] }));
    // Held far longer than the DLQ's own visibility timeout, as a stuck consumer would.
    await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq, VisibilityTimeout: 600 }));
    const replayed = await s.cli('replay', 'dlq', '--queue', 'orders');
    expect(replayed.code).toBe(1);
    expect(replayed.stderr).toContain(
      '✘ 1 message(s) remain in the orders DLQ (0 visible, 1 in flight, 0 delayed): 1 still in flight after the DLQ',
    );
  });

  it('prints a function’s log with logs, filtered by text and time, and follows new lines with --follow', async () => {
    await using s = await stack();
    expect((await s.cli('send', SEED)).code).toBe(0);
    expect((await s.cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);
    const applied = await s.cli('logs', 'ingest', '--filter', 'batch applied');
    expect(applied.code, applied.stderr).toBe(0);
    const lines = applied.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ message: 'batch applied' });
    expect(
      (await s.cli('logs', 'ingest', '--since', '1h', '--filter', 'batch applied')).stdout,
    ).toBe(applied.stdout);
    expect((await s.cli('logs', 'ingest', '--since', '2999-01-01T00:00:00Z')).stdout).toBe('');
    // Lambda's own lines too, as in CloudWatch: a REPORT per invocation, the first with its init.
    const reports = (await s.cli('logs', 'ingest', '--filter', 'REPORT')).stdout.trim().split('\n');
    expect(reports.length).toBeGreaterThanOrEqual(1);
    for (const report of reports) expect(report).toMatch(/^REPORT RequestId: [\w-]+\tDuration: /);
    expect(reports.filter((r) => r.includes('\tInit Duration: '))).not.toEqual([]);
    const bad = await s.cli('logs', 'ingest', '--since', 'yesterday');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--since yesterday: give a duration');

    const follower = follow([
      '--local-state',
      join(dir, `${s.runtime.stack.stackName}.json`),
      'logs',
      'ingest',
      '--follow',
      '--filter',
      'follow-me',
    ]);
    try {
      const [first = ''] = seedBatches();
      const body = JSON.stringify({ ...JSON.parse(first), batchId: uniqueName('follow-me') });
      await s.runtime.clients.sqs.send(
        new SendMessageCommand({ QueueUrl: s.outputs.OrdersQueueUrl, MessageBody: body }),
      );
      await waitFor(() => follower.stdout().includes('follow-me'), {
        timeoutMs: DEADLINE_MS,
        what: 'logs --follow to print the new batch',
      });
    } finally {
      follower.stop();
    }
  });

  it('invokes a function with the SQS event its queue’s mapping would build, printing its log tail and each failed line', async () => {
    await using s = await stack();
    const prefix = uniqueName('invoke');
    const batchOf = (n: number) =>
      JSON.stringify({
        batchId: `${prefix}-${n}`,
        events: [
          {
            eventId: `${prefix}-e${n}`,
            orderId: `${prefix}-o${n}`,
            customerId: 'C1',
            status: 'placed',
            amount: '5.00',
            currency: 'USD',
            eventTime: '2026-10-01T09:05:00Z',
          },
        ],
      });
    const file = join(dir, `${prefix}.ndjson`);
    writeFileSync(file, `${batchOf(1)}\n{"batchId":\n`);

    // The event alone: the orders queue's records, in the file's order; nothing runs.
    const only = await s.cli('invoke', 'ingest', file, '--event-only');
    expect(only.code, only.stderr).toBe(0);
    const EventSchema = v.object({
      Records: v.array(v.object({ body: v.string(), eventSourceARN: v.string() })),
    });
    expect(
      parseJson(EventSchema, only.stdout).Records.map((r) => [r.body, r.eventSourceARN]),
    ).toEqual([
      [batchOf(1), s.outputs.OrdersQueueArn],
      ['{"batchId":', s.outputs.OrdersQueueArn],
    ]);
    expect(await s.views.orders()).toEqual([]);

    const invoked = await s.cli('invoke', 'ingest', file, '--logs');
    expect(invoked.code, invoked.stderr).toBe(0);
    expect(invoked.stdout).toContain('with 2 records');
    expect(invoked.stdout).toContain('✓ every record succeeded');
    // A fresh environment's first invocation, counted as a cold start as on Lambda, and the
    // REPORT line's fields apart by tabs.
    expect(invoked.stdout).toContain('"cold_start":true');
    expect(invoked.stdout).toMatch(
      /REPORT RequestId: [\w-]+\tDuration: [\d.]+ ms\t.*\tInit Duration: [\d.]+ ms\n/,
    );
    expect((await s.views.orders()).map((o) => o.orderId)).toEqual([`${prefix}-o1`]);
    // One invocation's lines in its function's log, found by its request id.
    const requestId = /^START RequestId: ([\w-]+)/m.exec(invoked.stdout)?.[1] ?? '';
    const own = (await s.cli('logs', 'ingest', '--filter', requestId)).stdout.trim().split('\n');
    expect(own[0]).toBe(`START RequestId: ${requestId} Version: $LATEST`);
    expect(own.some((l) => l.includes('"message":"batch applied"'))).toBe(true);
    expect(own.at(-1)).toMatch(new RegExp(`^REPORT RequestId: ${requestId}\t`));
    // The body that is no batch was quarantined, not failed.
    const rejects = parseJson(RejectsSchema, (await s.cli('rejects', '--json')).stdout);
    expect(rejects.map((r) => r.reason)).toEqual(['invalid-json']);

    // Bodies go to the SQS-triggered functions only.
    const noFile = await s.cli('invoke', 'ingest');
    expect([noFile.code, noFile.stderr]).toEqual([
      1,
      'onceflow: give ingest a file of message bodies, one per line (- for stdin)\n',
    ]);
    const withFile = await s.cli('invoke', 'finalize', file);
    expect(withFile.stderr).toContain("finalize runs on its schedule's event: it takes no bodies");

    // An environment that dies before the commit fails the whole invocation: exit 1.
    s.runtime.addCrash({ when: (call) => call.action === 'TransactWriteItems', phase: 'before' });
    const second = join(dir, `${prefix}-2.ndjson`);
    writeFileSync(second, batchOf(2));
    const crashed = await s.cli('invoke', 'ingest', second);
    expect(crashed.code).toBe(1);
    expect(crashed.stdout).toContain('✘ it failed (Unhandled): Runtime.ExitError');
    expect(crashed.stdout).toContain('every record would be delivered again');
  });

  it('reconciles an interval: deletes an orphan hour object inside it, keeps one outside it, and plans first with --dry-run', async () => {
    await using s = await stack();
    await s.cli('send', SEED);
    await s.cli('drain');
    const orphan = (hour: string) =>
      s.runtime.clients.s3.send(
        new PutObjectCommand({
          Bucket: s.outputs.BucketName,
          Key: hourObjectKey(hour),
          Body: JSON.stringify({ hour, events: 1, byStatus: {}, revision: 1 }),
        }),
      );
    await orphan('2026-10-01T15:00:00Z');
    await orphan('2026-10-02T15:00:00Z');
    // A missing object inside the interval, too.
    await s.runtime.clients.s3.send(
      new DeleteObjectCommand({
        Bucket: s.outputs.BucketName,
        Key: hourObjectKey('2026-10-01T11:00:00Z'),
      }),
    );

    const verified = await s.cli('verify');
    expect(verified.code).toBe(1);
    expect(verified.stdout).toContain('2026-10-01T11:00:00Z  missing-object');
    expect(verified.stdout).toContain('2026-10-01T15:00:00Z  orphan-object');
    expect(verified.stdout).toContain('2026-10-02T15:00:00Z  orphan-object');
    const verifiedJson = await s.cli('verify', '--json');
    expect(verifiedJson.code).toBe(1);
    const report = parseJson(
      v.object({
        checked: v.number(),
        differences: v.array(v.object({ hour: v.string(), problem: v.string() })),
      }),
      verifiedJson.stdout,
    );
    expect(report.differences.map((d) => [d.hour, d.problem])).toEqual([
      ['2026-10-01T11:00:00Z', 'missing-object'],
      ['2026-10-01T15:00:00Z', 'orphan-object'],
      ['2026-10-02T15:00:00Z', 'orphan-object'],
    ]);

    const plan = await s.cli(
      'reconcile',
      '--from',
      '2026-10-01',
      '--to',
      '2026-10-02',
      '--dry-run',
    );
    expect(plan.stdout).toMatch(/2026-10-01T11:00:00Z │ write/);
    expect(plan.stdout).toMatch(/2026-10-01T15:00:00Z │ delete/);
    expect(plan.stdout).toContain('would write 1, would delete 1, unchanged 3');
    const planJson = JSON.parse(
      (
        await s.cli(
          'reconcile',
          '--from',
          '2026-10-01',
          '--to',
          '2026-10-02',
          '--dry-run',
          '--json',
        )
      ).stdout,
    ) as { hour: string; action: string }[];
    expect(planJson.filter((p) => p.action !== 'unchanged')).toMatchObject([
      { hour: '2026-10-01T11:00:00Z', action: 'write' },
      { hour: '2026-10-01T15:00:00Z', action: 'delete' },
    ]);
    expect((await s.cli('verify')).code).toBe(1);

    const done = await s.cli('reconcile', '--from', '2026-10-01', '--to', '2026-10-02');
    expect(done.stdout).toContain('wrote 1, deleted 1, unchanged 3');
    const hours = (await s.views.hourly()).map((h) => h.hour);
    expect(hours).toEqual([...expectedHourly().map((h) => h.hour), '2026-10-02T15:00:00Z']);
    const inside = await s.cli('verify', '--from', '2026-10-01', '--to', '2026-10-02');
    expect(inside.code).toBe(0);
  });

  it('lists quarantined messages with their reasons, counts them in status, and reads orders by id, by customer and page by page', async () => {
    await using s = await stack();
    const file = join(dir, 'bad.ndjson');
    writeFileSync(
      file,
      ['{"batchId":', JSON.stringify({ batchId: 'x', events: [] }), ...seedBatches()].join('\n'),
    );
    await s.cli('send', file);
    await s.cli('drain');
    const rejects = parseJson(RejectsSchema, (await s.cli('rejects', '--json')).stdout);
    expect(rejects.map((r) => r.reason).sort()).toEqual(['invalid-json', 'schema-violation']);
    expect((await s.cli('rejects')).stdout).toContain('2 quarantined');
    const byReason = await s.cli('rejects', '--json', '--reason', 'invalid-json');
    expect(parseJson(RejectsSchema, byReason.stdout).map((r) => r.reason)).toEqual([
      'invalid-json',
    ]);
    expect((await s.cli('rejects', '--since', '2999-01-01')).stdout).toContain('0 quarantined');
    expect((await s.cli('rejects', '--since', '2000-01-01')).stdout).toContain('2 quarantined');
    // The body refused whole named batch x: found by its id, and named by `batch x`.
    const named = await s.cli('rejects', '--json', '--batch-id', 'x');
    expect(parseJson(RejectsSchema, named.stdout).map((r) => r.reason)).toEqual([
      'schema-violation',
    ]);
    const absent = await s.cli('batch', 'x');
    expect(absent.code).toBe(1);
    expect(absent.stderr).toContain('onceflow rejects --batch-id x');
    const one = JSON.parse((await s.cli('orders', '--json', '--order-id', '1001')).stdout);
    expect(one).toEqual(expectedOrders().filter((o) => o.orderId === '1001'));
    const c01 = JSON.parse((await s.cli('orders', '--json', '--customer', 'C01')).stdout);
    expect(c01).toEqual(expectedOrders().filter((o) => o.customerId === 'C01'));
    // Page by page: each page's cursor on stderr, the pages together every order once.
    const paged: unknown[] = [];
    let after: string[] = [];
    for (let page = 0; page < 10; page++) {
      const out = await s.cli('orders', '--json', '--limit', '3', ...after);
      paged.push(...parseJson(v.array(v.unknown()), out.stdout));
      const next = /more: --after (\S+)/.exec(out.stderr)?.[1];
      if (next === undefined) break;
      after = ['--after', next];
    }
    expect(paged).toEqual(expect.arrayContaining(expectedOrders()));
    expect(paged).toHaveLength(expectedOrders().length);
    const badCursor = await s.cli('orders', '--limit', '3', '--after', 'bogus');
    expect(badCursor.code).toBe(1);
    expect(badCursor.stderr).toContain('bogus: not a cursor onceflow handed out');
    const unknown = await s.cli('orders', '--order-id', 'no-such-order');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no order no-such-order');
    const status = await s.cli('status');
    expect(status.stdout).toMatch(
      /ledger: 4 batches applied \(\d+ events\), 0 pending; duplicates recognised: \S+; conflicts: 0; rejects: 2/,
    );
    // The quarantine alarm fired, with CloudWatch's reason: the rejects in its period (a
    // redelivered reject counts again in the metric, not in the reject records).
    expect(status.stdout).toMatch(/^alarms: \d+, 1 in ALARM$/m);
    expect(status.stdout).toMatch(
      /^ {2}ALARM RejectedMessages: Threshold Crossed: 1 of 1 period was greater than or equal to the threshold \(1\), 1 needed for ALARM; datapoints \[\d+\.0 \(\S+Z\)\]\.$/m,
    );
  });

  it('prints quarantined bodies one per line with rejects --bodies, and the corrected ones apply when sent', async () => {
    await using s = await stack();
    const event = (orderId: string, amount: unknown) => ({
      eventId: 'e-1',
      orderId,
      customerId: 'C09',
      status: 'placed',
      amount,
      currency: 'USD',
      eventTime: '2026-10-01T09:00:00Z',
    });
    // A producer's bodies: an amount as a number, pretty-printed over several lines; a body cut
    // short; and one cut short over two lines, which no single line can hold unchanged.
    const pretty = JSON.stringify({ batchId: 'fix-1', events: [event('fix-1', 25.5)] }, null, 2);
    const cut = JSON.stringify({ batchId: 'fix-2', events: [event('fix-2', '7.25')] }).slice(0, -2);
    const sent = await s.runtime.clients.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: s.outputs.OrdersQueueUrl,
        Entries: [pretty, cut, '{"batchId":\n"fix-'].map((body, i) => ({
          Id: String(i),
          MessageBody: body,
        })),
      }),
    );
    expect(sent.Failed ?? []).toEqual([]);
    const unreadable = sent.Successful?.find((m) => m.Id === '2')?.MessageId;
    expect((await s.cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);

    const out = await s.cli('rejects', '--bodies');
    expect(out.code).toBe(0);
    const lines = out.stdout.split('\n').filter((line) => line !== '');
    expect(lines.sort()).toEqual([cut, pretty.replaceAll('\n', ' ')].sort());
    expect(out.stderr).toContain(
      `left out ${unreadable} (invalid-json): its body spans several lines and is not JSON`,
    );
    expect(out.stderr).toContain('2 bodies to correct and send again');

    // Corrected as an operator would: the amount as a string, the cut body completed.
    const fixed = join(dir, 'fixed.ndjson');
    writeFileSync(
      fixed,
      lines
        .map((line) => (line === cut ? `${line}]}` : line.replace('25.5', '"25.50"')))
        .join('\n'),
    );
    expect((await s.cli('send', fixed)).code).toBe(0);
    expect((await s.cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);
    const orders = parseJson(
      v.array(v.object({ orderId: v.string(), amount: v.string() })),
      (await s.cli('orders', '--json', '--customer', 'C09')).stdout,
    );
    expect(orders.map((o) => [o.orderId, o.amount]).sort()).toEqual([
      ['fix-1', '25.50'],
      ['fix-2', '7.25'],
    ]);
    expect(parseJson(RejectsSchema, (await s.cli('rejects', '--json')).stdout)).toHaveLength(3);

    const both = await s.cli('rejects', '--bodies', '--json');
    expect(both.code).toBe(1);
    expect(both.stderr).toContain("option '--bodies' cannot be used with option '--json'");
  });

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
});

describe('untrusted text in the terminal', () => {
  it('prints hostile keys, details and ids escaped in rejects and orders, and exactly in --json', async () => {
    await using s = await stack();
    // An unknown key that would retitle and clear the terminal, and one far too long for a detail.
    const hostileKey = '\u001b]0;pwned\u0007\u001b[2J';
    const [first = '{}'] = seedBatches();
    const bad = { ...parseBatch(first), batchId: 'hostile-1', [hostileKey]: 1 };
    const long = { ...parseBatch(first), batchId: 'hostile-2', ['k'.repeat(5000)]: 1 };
    // Valid under the contract: C1 and bidi characters are not C0 controls.
    const event = { ...parseBatch(first).events[0], customerId: 'C\u009b2J\u202eevil' };
    const sneaky = { batchId: 'hostile-3', events: [event] };
    const file = join(dir, 'hostile.ndjson');
    writeFileSync(file, [bad, long, sneaky].map((b) => JSON.stringify(b)).join('\n'));
    expect((await s.cli('send', file)).code).toBe(0);
    expect((await s.cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);

    const rejects = await s.cli('rejects');
    for (const c of ['\u001b', '\u0007', '\u009b', '\u202e'])
      expect(rejects.stdout).not.toContain(c);
    expect(rejects.stdout).toContain('\\u{001b}]0;pwned\\u{0007}');
    const records = parseJson(RejectsSchema, (await s.cli('rejects', '--json')).stdout);
    const hostile = records.find((r) => r.body === JSON.stringify(bad));
    expect(hostile?.detail).toContain(hostileKey);
    expect(hostile?.body).toBe(JSON.stringify(bad));
    const bounded = records.find((r) => r.body === JSON.stringify(long));
    expect(bounded?.detail.length).toBeLessThan(1200);
    expect(bounded?.detail).toContain('the body is kept whole');
    expect(bounded?.body).toBe(JSON.stringify(long));

    const orders = await s.cli('orders');
    for (const c of ['\u009b', '\u202e']) expect(orders.stdout).not.toContain(c);
    expect(orders.stdout).toContain('C\\u{009b}2J\\u{202e}evil');
    const exact = parseJson(
      v.array(v.object({ customerId: v.string() })),
      (await s.cli('orders', '--json')).stdout,
    );
    expect(exact.map((o) => o.customerId)).toContain('C\u009b2J\u202eevil');

    // An object under rejects/ that the quarantine did not write, with a hostile key: the error
    // names the key, escaped.
    await s.runtime.clients.s3.send(
      new PutObjectCommand({
        Bucket: s.outputs.BucketName,
        Key: `rejects/ingest/${hostileKey}.json`,
        Body: '{"note":"not a reject"}',
      }),
    );
    const foreign = await s.cli('rejects');
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain('is not a reject record');
    expect(foreign.stderr).toContain('\\u{001b}]0;pwned\\u{0007}');
    expect(foreign.stderr).not.toContain('\u001b');
  });
});

describe('onceflow generate', () => {
  const generate = (seed: string) =>
    onceflow([
      'generate',
      '--orders',
      '200',
      '--hours',
      '6',
      '--seed',
      seed,
      '--duplicate-rate',
      '0.3',
      '--late-rate',
      '0.1',
      '--invalid-rate',
      '0.2',
      '--batch-size',
      '20',
    ]);

  it('prints the same stream for the same seed and another for another seed', async () => {
    const [a, b, c] = await Promise.all([generate('3'), generate('3'), generate('4')]);
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    expect(a.stdout).not.toBe(c.stdout);
    const lines = a.stdout.trim().split('\n');
    const ids = lines.flatMap((l) => {
      try {
        return [parseJson(v.object({ batchId: v.optional(v.string()) }), l).batchId ?? ''];
      } catch {
        return ['(invalid)'];
      }
    });
    expect(
      new Set(ids.filter((id) => id.includes('-bad-') || id === '(invalid)' || id === '')).size,
    ).toBeGreaterThan(0);
    expect(ids.length).toBeGreaterThan(new Set(ids).size); // duplicates
    expect(a.stderr).toMatch(
      /\d+ batches, \d+ events; \d+ duplicated, \d+ late events, \d+ invalid bodies/,
    );
  });

  it('takes a date or a whole hour for --start, spelled any way, and names anything else', async () => {
    const startingAt = (start: string) => onceflow(['generate', '--orders', '5', '--start', start]);
    const [date, hour, half, nonsense] = await Promise.all([
      startingAt('2026-10-02'),
      startingAt('2026-10-02T00:00:00.000Z'),
      startingAt('2026-10-02T00:30:00Z'),
      startingAt('nonsense'),
    ]);
    expect(date.code).toBe(0);
    expect(hour.stdout).toBe(date.stdout);
    expect(date.stdout).toContain('"eventTime":"2026-10-02T');
    for (const refused of [half, nonsense]) {
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        /^onceflow: --start .+: give a date \(2026-10-01\) or a whole UTC hour/,
      );
      expect(refused.stdout).toBe('');
    }
  });
});

describe('onceflow local up', () => {
  it('runs the stack until interrupted, writing the state the other commands read, and prints its endpoint for scripts', async () => {
    const state = join(mkdtempSync(join(tmpdir(), 'onceflow-up-')), 'local.json');
    const child = spawnOnceflow(['--local-state', state, 'local', 'up', '--port', '0', '--watch']);
    let printed = '';
    child.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
    });
    child.stderr.resume();
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      await waitFor(async () => existsSync(state), {
        timeoutMs: DEADLINE_MS,
        what: 'the local state file',
      });
      const status = await onceflow(['--local-state', state, 'status', '--json']);
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ ledger: { applied: 0, pending: 0 } });
      const recorded = readLocalState(state);
      if (!recorded.ok) throw new Error(recorded.problem);
      const endpoint = await onceflow(['--local-state', state, 'local', 'endpoint']);
      expect(endpoint.stdout).toBe(`${recorded.state.endpoint}\n`);
      const env = await onceflow(['--local-state', state, 'local', 'endpoint', '--env']);
      expect(env.stdout.split('\n')).toEqual([
        `export AWS_ENDPOINT_URL='${recorded.state.endpoint}'`,
        "export AWS_REGION='us-east-1'",
        "export AWS_DEFAULT_REGION='us-east-1'",
        `export AWS_ACCESS_KEY_ID='${LOCAL_CREDENTIALS.accessKeyId}'`,
        `export AWS_SECRET_ACCESS_KEY='${LOCAL_CREDENTIALS.secretAccessKey}'`,
        '',
      ]);
      // --watch reaches npm start, which says what it watches once the stack runs.
      await waitFor(() => printed.includes('Watching infra, functions, shared, adapters'), {
        timeoutMs: DEADLINE_MS,
        what: 'the watcher to start',
      });
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });
});

describe('onceflow errors and help', () => {
  it('reports in one line that DynamoDB Local died under the edge, naming it', async () => {
    const failures: string[] = [];
    const own = await startEmulators({ onFailure: (message) => failures.push(message) });
    try {
      const runtime = await startLocalRuntime({
        assemblyDir: assembly.assemblyDir,
        stackName: assembly.stackName,
        localStackName: uniqueName('dead'),
        emulators: own,
      });
      const state = recordState(runtime);
      process.kill(own.dynamoLocal.pid, 'SIGKILL');
      await waitFor(() => failures.length > 0, {
        timeoutMs: DEADLINE_MS,
        what: 'the runtime to notice',
      });
      expect(failures).toEqual([
        `DynamoDB Local (pid ${own.dynamoLocal.pid}) was killed (SIGKILL)`,
      ]);
      const status = await onceflow(['--local-state', state, 'status']);
      expect(status.code).toBe(1);
      expect(status.stderr).toMatch(
        new RegExp(
          `^onceflow: .*the onceflow local edge could not reach DynamoDB Local \\(pid ${own.dynamoLocal.pid}\\)`,
        ),
      );
      expect(status.stderr.trim().split('\n')).toHaveLength(1);
      await runtime.stop();
    } finally {
      await own.stop();
    }
  });

  it('says clearly that no local stack runs, without a stack trace', async () => {
    const r = await onceflow(['--local-state', join(dir, 'missing.json'), 'status']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^onceflow: no running local stack .*npm start -- --keep/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('names a file send cannot read and why, before looking for a stack', async () => {
    const missing = join(dir, 'no-such.ndjson');
    const [absent, directory] = await Promise.all([
      onceflow(['--local-state', join(dir, 'missing.json'), 'send', missing]),
      onceflow(['--local-state', join(dir, 'missing.json'), 'send', dir]),
    ]);
    expect([absent.code, directory.code]).toEqual([1, 1]);
    expect(absent.stderr).toBe(`onceflow: cannot read ${missing}: no such file\n`);
    expect(directory.stderr).toBe(`onceflow: cannot read ${dir}: it is a directory\n`);
  });

  it('names each batch, order or customer id the contract bans, cut and escaped, before looking for a stack', async () => {
    const long = 'y'.repeat(3000);
    const r = await onceflow([
      '--local-state',
      join(dir, 'missing.json'),
      'batch',
      'fine-1',
      '',
      long,
      'a\u001b[31mb',
    ]);
    expect(r.code).toBe(1);
    const rule = 'is no batch id: it must be 1-128 characters of A-Z a-z 0-9 . _ : / -';
    expect(r.stderr.split('\n')).toEqual([
      `onceflow: an empty id ${rule}`,
      `onceflow: ${'y'.repeat(128)}… (3000 characters) ${rule}`,
      `onceflow: a\\u{001b}[31mb ${rule}`,
      '',
    ]);
    expect(r.stdout).toBe('');

    const missing = join(dir, 'missing.json');
    const [order, customer] = await Promise.all([
      onceflow(['--local-state', missing, 'orders', '--order-id', 'o\u0001']),
      onceflow(['--local-state', missing, 'orders', '--customer', 'c'.repeat(129)]),
    ]);
    expect([order.code, customer.code]).toEqual([1, 1]);
    expect(order.stderr).toBe(
      'onceflow: o\\u{0001} is no order id: it must not contain control characters\n',
    );
    expect(customer.stderr).toBe(
      `onceflow: ${'c'.repeat(128)}… (129 characters) is no customer id: it must be at most 128 characters\n`,
    );
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

  it('prints an example in the help of every command', async () => {
    // Every command the CLI registers, however deep: one added without an example fails here.
    const leaves = (command: Command): Command[] =>
      command.commands.length === 0 ? [command] : command.commands.flatMap(leaves);
    const commands = leaves(cli);
    expect(commands.length).toBeGreaterThanOrEqual(19);
    for (const command of commands) {
      let help = '';
      command.configureOutput({ writeOut: (text) => (help += text) });
      command.outputHelp();
      expect(help, command.name()).toMatch(/Examples?:\n\s+.*npx onceflow /);
    }
    // And as a process: the top-level help lists them.
    const r = await onceflow(['--help']);
    expect(r.code).toBe(0);
    for (const command of cli.commands) expect(r.stdout).toContain(command.name());
  });
});
