/**
 * `replay archive` against fauxqs: archived batches read several at a time and sent chunk by
 * chunk, each once, in the selection's order, a body the queue refuses named by its key.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { ingestSettings } from '../../adapters/wiring.ts';
import { inspectBatch } from '../../cli/commands/batch.ts';
import { planArchiveReplay, replayArchive } from '../../cli/commands/replay.ts';
import { waitFor } from '../../local/net.ts';
import { loadIngestConfig } from '../../shared/config.ts';
import { planBatch } from '../../shared/ingest.ts';
import { validateBatch } from '../../shared/schema.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { batch, DAY } from '../support/hours.ts';
import { holdUntilConcurrent } from '../support/overlap.ts';
import { cliTarget, createPipeline, type Pipeline } from '../support/pipeline.ts';

const DAY_MS = Date.parse(`${DAY}T00:00:00Z`);
const WHOLE_DAY = { fromMs: DAY_MS, toMs: DAY_MS + 86_400_000 };

/** Every body in the orders queue, each received once and deleted, once `count` have come. */
const ordersQueueBodies = async (p: Pipeline, count: number) => {
  const bodies: string[] = [];
  await waitFor(
    async () => {
      const out = await p.admin.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: p.outputs.OrdersQueueUrl,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 600,
        }),
      );
      for (const m of out.Messages ?? []) {
        bodies.push(m.Body ?? '');
        await p.admin.sqs.send(
          new DeleteMessageCommand({
            QueueUrl: p.outputs.OrdersQueueUrl,
            ReceiptHandle: m.ReceiptHandle,
          }),
        );
      }
      return bodies.length >= count;
    },
    { timeoutMs: DEADLINE_MS, what: `${count} replayed messages`, intervalMs: 200 },
  );
  return bodies;
};

const parsed = (body: string) => {
  const result = validateBatch(JSON.parse(body));
  if (!result.ok) throw new Error(result.detail);
  return result.batch;
};

describe('replay archive', () => {
  it('reads archived batches several at a time and sends each once, chunk after chunk', async () => {
    const p = await createPipeline();
    const bodies = ['01', '02', '03', '04', '05', '06', '07'].map((h) => batch(`${h}:15`));
    await p.deliverUntilDone(bodies);
    holdUntilConcurrent(p.faults, 'ListObjectsV2', 3);
    holdUntilConcurrent(p.faults, 'GetObject:raw', 3);
    const progress: [number, number][] = [];
    const result = await replayArchive(
      cliTarget(p),
      { interval: WHOLE_DAY },
      { chunkSize: 3, onProgress: (done, total) => progress.push([done, total]) },
    );
    expect(result).toEqual({
      batches: 7,
      missing: [],
      refused: [],
      unknown: [],
      hours: { fromMs: DAY_MS + 3_600_000, toMs: DAY_MS + 8 * 3_600_000 },
    });
    // Once each, in the selection's order (hour by hour), whatever the chunk.
    expect(await ordersQueueBodies(p, 7)).toEqual(bodies);
    // Counted across chunks: never back, always out of the whole selection.
    expect(progress.map(([done]) => done)).toEqual(
      progress.map(([done]) => done).sort((a, b) => a - b),
    );
    expect(new Set(progress.map(([, total]) => total))).toEqual(new Set([7]));
    expect(progress.at(-1)).toEqual([7, 7]);
  });

  it('holds 160 archived bodies at most by default: a chunk is sent before the next is read', async () => {
    const p = await createPipeline();
    // 161 archived batches, written to the archive as ingest writes them, none delivered.
    const bodies = Array.from({ length: 161 }, (_, i) =>
      batch(`${String(1 + (i % 20)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}`),
    );
    const settings = ingestSettings(loadIngestConfig(p.env));
    await Promise.all(
      bodies.map((body) =>
        p.ports.archive.putOnce(planBatch(parsed(body), settings).archiveKey, body),
      ),
    );
    const result = await replayArchive(cliTarget(p), { interval: WHOLE_DAY });
    expect(result.batches).toBe(161);
    const reads = p.faults.trace.filter((call) => call === 'GetObject:raw');
    expect(reads).toHaveLength(161);
    const firstSend = p.faults.trace.indexOf('SendMessageBatch');
    expect(
      p.faults.trace.slice(0, firstSend).filter((call) => call === 'GetObject:raw'),
    ).toHaveLength(160);
  });

  it('selects by arrival time, reading the arrival index several hours at a time', async () => {
    const p = await createPipeline();
    const bodies = ['01', '02'].map((h) => batch(`${h}:15`));
    await p.deliverUntilDone(bodies);
    holdUntilConcurrent(p.faults, 'ListObjectsV2', 3);
    const result = await replayArchive(cliTarget(p), {
      receivedFromMs: Date.now() - 5 * 3_600_000,
    });
    expect([result.batches, result.missing, result.refused]).toEqual([2, [], []]);
    expect(await ordersQueueBodies(p, 2)).toEqual(bodies);
  });

  it('names a body the queue refuses by its archive key, in whichever chunk it falls', async () => {
    const p = await createPipeline();
    const bodies = ['01', '03', '04'].map((h) => batch(`${h}:15`));
    await p.deliverUntilDone(bodies);
    // An archived object larger than the queue takes, last of the second chunk (01 03 | 04 05).
    const oversize = `raw/date=${DAY}/hour=05/oversize.json`;
    await p.admin.s3.send(
      new PutObjectCommand({ Bucket: p.bucketName, Key: oversize, Body: 'x'.repeat(1_048_577) }),
    );
    const result = await replayArchive(cliTarget(p), { interval: WHOLE_DAY }, { chunkSize: 2 });
    expect(result.batches).toBe(3);
    expect(result.refused).toEqual([
      { key: oversize, reason: 'the body is 1048577 bytes; the queue takes at most 1048576' },
    ]);
    expect(await ordersQueueBodies(p, 3)).toEqual(bodies);
  });

  it('re-sends the batches named by id in the order given, resuming a pending one, and names the ids the ledger does not know and the archives missing', async () => {
    const p = await createPipeline();
    const applied = batch('01:15');
    await p.deliverUntilDone([applied]);
    // A batch whose delivery stopped after archiving and claiming: pending, its message gone.
    const stalled = batch('02:15', '03:15');
    const plan = planBatch(parsed(stalled), ingestSettings(loadIngestConfig(p.env)));
    await p.ports.archive.putOnce(plan.archiveKey, stalled);
    await p.ports.ledger.claim(plan, undefined, Date.now());
    // And one claimed whose archive was never written: named, with nothing to send.
    const unarchived = batch('04:15');
    const unarchivedPlan = planBatch(parsed(unarchived), ingestSettings(loadIngestConfig(p.env)));
    await p.ports.ledger.claim(unarchivedPlan, undefined, Date.now());
    const stalledId = parsed(stalled).batchId;
    const appliedId = parsed(applied).batchId;
    expect(await inspectBatch(cliTarget(p), stalledId)).toMatchObject({ state: 'pending' });

    const result = await replayArchive(cliTarget(p), {
      batchIds: [stalledId, 'b-never-sent', appliedId, parsed(unarchived).batchId],
    });
    expect(result).toEqual({
      batches: 2,
      missing: [unarchivedPlan.archiveKey],
      refused: [],
      unknown: ['b-never-sent'],
      hours: { fromMs: DAY_MS + 3_600_000, toMs: DAY_MS + 4 * 3_600_000 },
    });
    const sent = await ordersQueueBodies(p, 2);
    expect(sent).toEqual([stalled, applied]);
    // Delivered, the pending batch completes and the applied one changes nothing.
    await p.deliverUntilDone(sent);
    expect(await inspectBatch(cliTarget(p), stalledId)).toMatchObject({
      state: 'applied',
      fates: { counted: 2, unclaimed: 0 },
    });
    expect(await inspectBatch(cliTarget(p), appliedId)).toMatchObject({
      state: 'applied',
      fates: { counted: 1, duplicate: 0 },
    });
  });

  it('lists with --dry-run what a replay would send, each batch with what the ledger holds of it, and sends nothing', async () => {
    const p = await createPipeline();
    const applied = batch('01:15');
    await p.deliverUntilDone([applied]);
    const settings = ingestSettings(loadIngestConfig(p.env));
    // Pending: archived and claimed, its delivery stopped there.
    const stalled = batch('02:15', '03:15');
    const stalledPlan = planBatch(parsed(stalled), settings);
    await p.ports.archive.putOnce(stalledPlan.archiveKey, stalled);
    await p.ports.ledger.claim(stalledPlan, undefined, Date.now());
    // Archived, with no ledger entry (as after a restore to a point before it arrived).
    const unclaimed = batch('04:15');
    const unclaimedPlan = planBatch(parsed(unclaimed), settings);
    await p.ports.archive.putOnce(unclaimedPlan.archiveKey, unclaimed);
    // Claimed, never archived: named through --batch-id, with nothing to send.
    const unarchived = batch('05:15');
    const unarchivedPlan = planBatch(parsed(unarchived), settings);
    await p.ports.ledger.claim(unarchivedPlan, undefined, Date.now());
    // An object the archive's layout does not name.
    const handPut = `raw/date=${DAY}/hour=06/by-hand.txt`;
    await p.admin.s3.send(
      new PutObjectCommand({ Bucket: p.bucketName, Key: handPut, Body: applied }),
    );
    const traceStart = p.faults.trace.length;

    const plan = await planArchiveReplay(cliTarget(p), {
      interval: WHOLE_DAY,
      batchIds: [parsed(unarchived).batchId, 'b-never-sent'],
    });
    const receivedAt = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    /** A batch's expected entry: its key and id from its body, the hour its key is filed under. */
    const entry = (body: string, hour: string, ledger: string, archived = true) => ({
      key: planBatch(parsed(body), settings).archiveKey,
      batchId: parsed(body).batchId,
      hour: `${DAY}T${hour}:00:00Z`,
      ledger,
      ...(ledger === 'absent' ? {} : { receivedAt }),
      archived,
    });
    // In the order a replay sends them: the named ones first, then hour by hour.
    expect(plan).toEqual({
      entries: [
        entry(unarchived, '05', 'pending', false),
        entry(applied, '01', 'applied'),
        entry(stalled, '02', 'pending'),
        entry(unclaimed, '04', 'absent'),
        { key: handPut, hour: `${DAY}T06:00:00Z`, ledger: 'absent', archived: true },
      ],
      unknown: ['b-never-sent'],
    });
    // Nothing sent, and no archived body read.
    const calls = new Set(p.faults.trace.slice(traceStart).map((call) => call.split(':')[0]));
    expect([...calls].filter((call) => /^(SendMessage|GetObject)/.test(call ?? ''))).toEqual([]);
    const { Attributes } = await p.admin.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: p.outputs.OrdersQueueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    expect(Attributes).toMatchObject({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
    });
    expect(await inspectBatch(cliTarget(p), parsed(stalled).batchId)).toMatchObject({
      state: 'pending',
    });
  });
});
