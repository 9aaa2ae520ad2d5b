/** Recovery as an operator runs it on a local stack: `send`, `drain`, `replay`, `reconcile`, `drill`. */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import {
  ListMessageMoveTasksCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { queueDepth } from '../../adapters/sqs.ts';
import { referenceModel } from '../../harness/model.ts';
import { hourObjectKey } from '../../shared/keys.ts';
import { bodyOfSize } from '../support/bounds.ts';
import { onceflowWatched } from '../support/cli.ts';
import { essence, HoursSchema, SEED, StatusSchema, useCliStacks } from '../support/cli-stack.ts';
import { DEADLINE_S } from '../support/deadlines.ts';
import { expectedHourly, expectedOrders, seedBatches } from '../support/fixtures.ts';
import { parseJson } from '../support/json.ts';
import { peek } from '../support/peek.ts';
import { uniqueName } from '../support/pipeline.ts';

const { dir, stack } = useCliStacks();

describe('onceflow send, replay, reconcile and drill', () => {
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
    // Listed first: each batch the ledger shows applied, and nothing sent.
    const interval = ['--from', '2026-09-30', '--to', '2026-10-03'];
    const plan = await s.cli('replay', 'archive', ...interval, '--dry-run');
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(/│ make-orders-1 +│ 2026-10-01T\d{2}:00:00Z │ [^│]+ │ applied +│/);
    expect(plan.stdout).toContain(
      'would re-send 4 archived batches: 4 applied (recognised by the ledger: they change nothing); nothing was sent',
    );
    const planned = parseJson(
      v.array(v.object({ batchId: v.string(), ledger: v.string(), archived: v.boolean() })),
      (await s.cli('replay', 'archive', ...interval, '--dry-run', '--json')).stdout,
    );
    expect(planned.map((e) => [e.batchId, e.ledger, e.archived]).sort()).toEqual(
      [1, 2, 3, 4].map((n) => [`make-orders-${n}`, 'applied', true]),
    );
    // An id the ledger does not know is named, and exits 1, as a run does.
    const named = await s.cli(
      'replay',
      'archive',
      '--batch-id',
      'make-orders-2',
      'b-never-sent',
      '--dry-run',
    );
    expect(named.code).toBe(1);
    expect(named.stdout).toContain('would re-send 1 archived batch: 1 applied');
    expect(named.stderr).toContain('batch b-never-sent is not in the ledger');
    // Checked against the stack first: each batch already in its ledger, one id reused.
    const known = await s.cli('validate', SEED, '--against-stack');
    expect([known.code, known.stdout.trim().split('\n').at(-1)]).toEqual([
      0,
      '4 bodies: 0 apply (0 events over 0 hours), 4 already in the stack’s ledger',
    ]);
    const changed = join(dir, `changed-${uniqueName('v')}.ndjson`);
    writeFileSync(changed, readFileSync(SEED, 'utf8').replace('"25.50"', '"26.50"'));
    const reused = await s.cli('validate', changed, '--against-stack');
    expect(reused.code).toBe(1);
    expect(reused.stdout).toMatch(
      /│ +1 │ make-orders-1 +│ batch-conflict: the stack’s ledger holds this id with other/,
    );
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
    // Someone peeks at it, and lets it go once the command says it waits for it.
    const peeked = await peek(sqs, dlq);
    const waiting = '1 message(s) in flight or delayed in the orders DLQ: waiting up to';
    const replayed = await onceflowWatched(
      ['--local-state', s.state, 'replay', 'dlq', '--queue', 'orders'],
      (stderr) => stderr.includes(waiting) && peeked.letGo(),
    );
    await peeked.settled();
    expect(replayed.stderr).toContain(waiting);
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

    const dryRun = ['reconcile', '--from', '2026-10-01', '--to', '2026-10-02', '--dry-run'];
    const plan = await s.cli(...dryRun);
    expect(plan.stdout).toMatch(/2026-10-01T11:00:00Z │ write/);
    expect(plan.stdout).toMatch(/2026-10-01T15:00:00Z │ delete/);
    expect(plan.stdout).toContain('would write 1, would delete 1, unchanged 3');
    const planJson = parseJson(
      v.array(v.object({ hour: v.string(), action: v.string() })),
      (await s.cli(...dryRun, '--json')).stdout,
    );
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
});
