/**
 * The chaos runs prove exactly-once only as far as their judge can tell a wrong state from a
 * right one: every schedule's verdict is zeros, which a judge that finds nothing would also give.
 * Here one schedule runs on the product without faults, and each test breaks the end state in
 * one way (in the stores, or in what the judge is told was sent), then puts it back.
 */
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { keyOf, orderKey } from '../../adapters/dynamo-items.ts';
import { firstOrderItem } from '../../adapters/dynamo-orders.ts';
import { readRejects, type StoredReject } from '../../adapters/s3-quarantine.ts';
import { deliveryFor } from '../../harness/chaos/delivery.ts';
import { diceFor } from '../../harness/chaos/dice.ts';
import { type Course, judge, type Verdict } from '../../harness/chaos/judge.ts';
import { hoursBehindCounters, play } from '../../harness/chaos/play.ts';
import { drawStream, type ScheduleStream } from '../../harness/chaos/stream.ts';
import { buildWorld, type World } from '../../harness/chaos/world.ts';
import type { GeneratedEvent } from '../../harness/generate.ts';
import { hourOfEventTime } from '../../harness/model.ts';
import { OnceflowStack } from '../../infra/onceflow-stack.ts';
import { readSettings } from '../../infra/settings.ts';
import { dayIndexKey, hourObjectKey } from '../../shared/keys.ts';
import { validateBatch } from '../../shared/schema.ts';
import { synthAssembly } from '../support/assembly.ts';

const SEED = 20261206;

describe('the chaos judge', () => {
  let assembly: ReturnType<typeof synthAssembly> | undefined;
  let world: World;
  let s: ScheduleStream;
  let course: Course;
  /** A batch of one order applied at the end, which the judge is told of. */
  let extra: { batchId: string; events: GeneratedEvent[] };

  beforeAll(async () => {
    // The stack without a coalescing window, as the fixed-seed chaos run uses: no queue delays.
    assembly = synthAssembly((app, name) => {
      const settings = readSettings((k) => (k === 'aggregateWindowSeconds' ? '0' : undefined));
      return new OnceflowStack(app, name, { settings });
    });
    const dice = diceFor(SEED);
    world = await buildWorld(
      {
        endpoint: inject('endpoint'),
        assemblyDir: assembly.assemblyDir,
        seed: SEED,
        latePolicy: 'quarantine',
      },
      dice,
    );
    s = drawStream(dice, SEED, 10);
    // No faults drawn: the course alone (redrive, re-sends, late events, replay, reconcile).
    const played = await play(world, deliveryFor(world, dice), dice, s, {
      seed: SEED,
      restore: false,
      lateEvents: true,
    });
    // Two more batches in the open hour the batch ahead of the stream moved the watermark to
    // (whether a schedule re-sends an event with other content is up to its dice): a conflicting
    // copy of that batch's event, and an order of its own.
    const ahead = played.late?.batches.find((b) => b.batchId.startsWith('chaos-ahead-'));
    const aheadEvent = ahead?.events[0];
    if (!aheadEvent) throw new Error('no batch ahead of the stream');
    const conflicting = {
      batchId: `judge-conflict-${SEED}`,
      events: [{ ...aheadEvent, status: aheadEvent.status === 'paid' ? 'cancelled' : 'paid' }],
    };
    extra = {
      batchId: `judge-extra-${SEED}`,
      events: [{ ...aheadEvent, orderId: `judge-extra-${SEED}`, eventId: 'e1' }],
    };
    const delivery = deliveryFor(world, diceFor(SEED + 1));
    await delivery.send([conflicting, extra].map((b) => JSON.stringify(b)));
    await delivery.runAll();
    // Told after the batches they follow: the model's first content of an event is the first
    // sent.
    const late = played.late && {
      ...played.late,
      batches: [...played.late.batches, conflicting, extra],
    };
    course = {
      resent: played.resent,
      late,
      restored: false,
      behindOnceDrained: played.behindOnceDrained,
    };
  }, 300_000);
  afterAll(async () => {
    await world?.dispose();
    assembly?.remove();
  });

  const verdict = (told: Course = course): Promise<Verdict> => judge(world, s, told);

  /** Runs `check` with an S3 object changed (or deleted), then puts the object back. */
  const withObject = async (
    key: string,
    change: ((text: string) => string) | 'delete',
    check: () => Promise<void>,
  ) => {
    const original = await world.store.getText(key);
    if (original === undefined) throw new Error(`no object ${key}`);
    const { s3 } = world.admin;
    await s3.send(
      change === 'delete'
        ? new DeleteObjectCommand({ Bucket: world.bucket, Key: key })
        : new PutObjectCommand({ Bucket: world.bucket, Key: key, Body: change(original) }),
    );
    try {
      await check();
    } finally {
      await s3.send(new PutObjectCommand({ Bucket: world.bucket, Key: key, Body: original }));
    }
  };

  const rejectOf = async (match: (r: StoredReject) => boolean): Promise<StoredReject> => {
    const reject = (await readRejects(world.store)).find(match);
    if (!reject) throw new Error('the schedule quarantined no such reject');
    return reject;
  };

  it('finds nothing wrong when the product ran the schedule without faults', async () => {
    const v = await verdict();
    expect(v.diffs).toEqual([]);
    expect(await hoursBehindCounters(world)).toEqual([]);
    expect({ lost: v.lost, doubleCounted: v.doubleCounted, stale: v.staleOverwrites }).toEqual({
      lost: 0,
      doubleCounted: 0,
      stale: 0,
    });
    // The schedule reached every check below: conflicts, refused parts, final hours.
    expect(v.eventConflicts).toBeGreaterThan(0);
    expect(v.tooLate).toBeGreaterThan(0);
    expect(v.finalizedHours).toBeGreaterThan(0);
  });

  it('counts an event lost when the model expects one the stores do not hold', async () => {
    const template = s.stream.batches[0]?.events[0];
    if (!template) throw new Error('empty stream');
    const unseen = {
      batchId: `judge-unseen-${SEED}`,
      events: [{ ...template, orderId: `judge-unseen-${SEED}`, eventId: 'e1' }],
    };
    const v = await verdict({
      ...course,
      resent: { ...course.resent, batches: [...course.resent.batches, unseen] },
    });
    expect({ lost: v.lost, doubleCounted: v.doubleCounted }).toEqual({ lost: 1, doubleCounted: 0 });
    expect(v.diffs).toContainEqual(expect.stringMatching(/^orders: \d+ found, \d+ expected/));
    expect(v.diffs).toContainEqual('hourly: 1 events lost, 0 double-counted');
  });

  it('counts an event twice when the stores hold a batch the model was not told of', async () => {
    const late = course.late && {
      ...course.late,
      batches: course.late.batches.filter((b) => b !== extra),
    };
    const v = await verdict({ ...course, late });
    // Its order, which the model does not know, counts as differing too.
    expect({ lost: v.lost, doubleCounted: v.doubleCounted, stale: v.staleOverwrites }).toEqual({
      lost: 0,
      doubleCounted: 1,
      stale: 1,
    });
    expect(v.diffs).toEqual([
      expect.stringMatching(/^orders: (\d+) found, \d+ expected, 1 differ$/),
      'hourly: 0 events lost, 1 double-counted',
    ]);
  });

  it('reports an order holding an older event than its newest', async () => {
    const byOrder = Map.groupBy(
      s.stream.batches.flatMap((b) => b.events),
      (e) => e.orderId,
    );
    const [orderId, events] =
      [...byOrder].find(([, es]) => new Set(es.map((e) => e.eventTime)).size > 1) ?? [];
    if (!orderId || !events) throw new Error('no order with events at two times');
    const oldest = events.reduce((a, b) =>
      Date.parse(b.eventTime) < Date.parse(a.eventTime) ? b : a,
    );
    const { dynamo } = world.admin;
    const key = keyOf(orderKey(orderId));
    const original = (await dynamo.send(new GetItemCommand({ TableName: world.table, Key: key })))
      .Item;
    if (!original) throw new Error(`order ${orderId} was never written`);
    // A write from an old state: the order's item as its oldest event alone made it.
    const parsed = validateBatch({ batchId: 'judge-stale', events: [oldest] });
    if (!parsed.ok) throw new Error('the oldest event does not validate');
    const stale = firstOrderItem(parsed.batch.events, {
      batchId: 'judge-stale',
      expiresAtSeconds: undefined,
      nowMs: Date.now(),
    });
    await dynamo.send(new PutItemCommand({ TableName: world.table, Item: stale }));
    try {
      const v = await verdict();
      expect({ lost: v.lost, doubleCounted: v.doubleCounted, stale: v.staleOverwrites }).toEqual({
        lost: 0,
        doubleCounted: 0,
        stale: 1,
      });
      expect(v.diffs).toContainEqual(
        expect.stringMatching(/^orders: (\d+) found, \1 expected, 1 differ$/),
      );
    } finally {
      await dynamo.send(new PutItemCommand({ TableName: world.table, Item: original }));
    }
  });

  it('counts an hour object short of or over its counters as lost or double-counted, and stale', async () => {
    const [object] = await world.store.listHourObjects();
    if (!object) throw new Error('no hour objects');
    const { hour } = object.aggregate;
    const [status] = Object.keys(object.aggregate.byStatus);
    if (!status) throw new Error(`hour ${hour} has no status`);
    const shifted = (by: number) => (text: string) => {
      const body = JSON.parse(text);
      body.events += by;
      body.byStatus[status].events += by;
      return JSON.stringify(body);
    };
    await withObject(hourObjectKey(hour), shifted(-1), async () => {
      // What a schedule checks once the queues drained, before the finalizer republishes.
      expect(await hoursBehindCounters(world)).toEqual([hour]);
      const v = await verdict();
      expect({ lost: v.lost, doubleCounted: v.doubleCounted, stale: v.staleOverwrites }).toEqual({
        lost: 1,
        doubleCounted: 0,
        stale: 1,
      });
    });
    await withObject(hourObjectKey(hour), shifted(2), async () => {
      const v = await verdict();
      expect({ lost: v.lost, doubleCounted: v.doubleCounted, stale: v.staleOverwrites }).toEqual({
        lost: 0,
        doubleCounted: 2,
        stale: 1,
      });
    });
  });

  it('counts hours left behind their counters once the queues drained', async () => {
    const v = await verdict({ ...course, behindOnceDrained: ['2026-01-01T00:00:00Z'] });
    expect(v.staleOverwrites).toBe(1);
    expect(v.diffs).toEqual([
      'hour objects behind their counters once drained: 2026-01-01T00:00:00Z',
    ]);
  });

  it('reports an invalid body, an event conflict or a too-late part missing from rejects/', async () => {
    // A body quarantined once (a body sent twice is one distinct body, in two rejects).
    const rejects = await readRejects(world.store);
    const invalid = await rejectOf(
      (r) =>
        r.reason !== 'too-late' &&
        r.reason !== 'event-conflict' &&
        rejects.filter((o) => o.body === r.body).length === 1,
    );
    await withObject(invalid.key, 'delete', async () => {
      expect((await verdict()).diffs).toEqual([
        expect.stringMatching(/^rejects: (\d+) distinct bodies quarantined, \d+ expected$/),
      ]);
    });
    const conflict = await rejectOf((r) => r.reason === 'event-conflict');
    await withObject(conflict.key, 'delete', async () => {
      expect((await verdict()).diffs).toEqual([
        expect.stringMatching(/^event conflicts: \d+ reported, \d+ expected$/),
      ]);
    });
    const tooLate = await rejectOf((r) => r.reason === 'too-late');
    await withObject(tooLate.key, 'delete', async () => {
      const { diffs } = await verdict();
      expect(diffs).toContainEqual(expect.stringMatching(/^too-late parts not in rejects\/: /));
      expect(diffs).toContainEqual(
        expect.stringMatching(/^too-late rejects: \d+, \d+ parts refused$/),
      );
    });
  });

  it('reports a final hour its day index leaves out or lists at another revision', async () => {
    const [index] = await world.store.listDayIndexes();
    const entry = index?.hours[0];
    if (!index || !entry) throw new Error('no final hours');
    const key = dayIndexKey(entry.hour.slice(0, 10));
    await withObject(
      key,
      (text) => {
        const body = JSON.parse(text);
        body.hours = body.hours.slice(1);
        return JSON.stringify(body);
      },
      async () => {
        expect((await verdict()).diffs).toEqual([
          `final hours missing from their day index: ${entry.hour}`,
        ]);
      },
    );
    await withObject(
      key,
      (text) => {
        const body = JSON.parse(text);
        body.hours[0].revision += 1;
        return JSON.stringify(body);
      },
      async () => {
        expect((await verdict()).diffs).toEqual([
          expect.stringMatching(
            new RegExp(`^day index lists ${entry.hour} at revision ${entry.revision + 1}, object `),
          ),
        ]);
      },
    );
  });

  it('reports an amended hour under the quarantine policy', async () => {
    const final = (await world.store.listHourObjects()).find((o) => o.lifecycle.final);
    if (!final) throw new Error('no final hour object');
    const { hour } = final.aggregate;
    await withObject(
      hourObjectKey(hour),
      (text) => {
        const body = JSON.parse(text);
        body.amendments = 1;
        body.amendedAt = new Date().toISOString();
        return JSON.stringify(body);
      },
      async () => {
        expect((await verdict()).diffs).toContainEqual(`amended under quarantine: ${hour}`);
      },
    );
  });

  it('reports a late batch applied to an hour that was final when it was sent', async () => {
    // The judge told that a batch of the stream, which the ledger refused nothing of, met
    // final hours.
    const ledger = new DynamoLedger(world.admin.dynamo, world.table);
    let accepted: (typeof s.stream.batches)[number] | undefined;
    for (const b of s.stream.batches) {
      const entry = await ledger.entry(b.batchId);
      if (entry && (entry.lateHours?.size ?? 0) === 0 && b.batchId !== s.victim?.batchId) {
        accepted = b;
        break;
      }
    }
    if (!accepted) throw new Error('the ledger refused part of every batch');
    const hours = [...new Set(accepted.events.map((e) => hourOfEventTime(e.eventTime)))];
    const told: Course = {
      ...course,
      late: course.late && {
        ...course.late,
        late: [...course.late.late, { batch: accepted, finalHours: hours }],
      },
    };
    expect((await verdict(told)).diffs).toContainEqual(
      `${accepted.batchId} applied events of final hours ${hours.join(', ')}`,
    );
  });
});
