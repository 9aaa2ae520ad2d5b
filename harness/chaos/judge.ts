/**
 * Comparing what a schedule left behind with the reference model: events lost or counted twice
 * cell by cell, orders not holding their newest event, hour objects behind their counters (once
 * the queues drained, and at the end), and bodies that should have been quarantined.
 */
import * as v from 'valibot';
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { DynamoFinalMarks } from '../../adapters/dynamo-hours.ts';
import { DynamoOrderReader } from '../../adapters/dynamo-order-reader.ts';
import { readRejects } from '../../adapters/s3-quarantine.ts';
import { planHour } from '../../shared/aggregator.ts';
import { batchDigest } from '../../shared/digest.ts';
import { validateBatch } from '../../shared/schema.ts';
import type { GeneratedEvent } from '../generate.ts';
import { hourOfEventTime, type ModelHour, referenceModel } from '../model.ts';
import type { LateSend } from './lateness.ts';
import type { Resent } from './resend.ts';
import type { ScheduleStream } from './stream.ts';
import type { World } from './world.ts';

export interface Verdict {
  readonly lost: number;
  readonly doubleCounted: number;
  readonly staleOverwrites: number;
  /** Event conflicts reported (one per re-sending batch and event). */
  readonly eventConflicts: number;
  /** Hours final at the end (listed in their day's index, with or without events). */
  readonly finalizedHours: number;
  /** Hours whose object counts amendments at the end. */
  readonly amendedHours: number;
  /** Events refused as too late (latePolicy quarantine). */
  readonly tooLate: number;
  /** Distinct hour object versions read during the schedule. */
  readonly versionsRead: number;
  readonly diffs: readonly string[];
}

export interface Course {
  readonly resent: Resent;
  readonly late: LateSend | undefined;
  /** Whether the table was restored to an earlier copy (decisions and marks may be older). */
  readonly restored: boolean;
  /** Hours whose object was behind its counters once the queues had drained (see `play`). */
  readonly behindOnceDrained: readonly string[];
}

type Batch = { batchId: string; events: GeneratedEvent[] };

/** A too-late reject's body: the refused part of its batch. */
const TooLatePartSchema = v.object({ events: v.array(v.object({ eventTime: v.string() })) });

/** Every distinct valid batch once; for the reused id, whichever content the ledger kept. */
const expectedBatches = async (world: World, s: ScheduleStream): Promise<Batch[]> => {
  const batches: Batch[] = [...s.stream.batches];
  if (!s.victim || !s.impostor) return batches;
  const entry = await new DynamoLedger(world.admin.dynamo, world.table).entry(s.victim.batchId);
  const parsed = validateBatch(JSON.parse(s.impostor));
  if (parsed.ok && entry?.digest === batchDigest(parsed.batch)) {
    const i = batches.findIndex((b) => b.batchId === s.victim?.batchId);
    batches[i] = { batchId: parsed.batch.batchId, events: [...parsed.batch.events] };
  }
  return batches;
};

/** Events by (hour, status): how many were lost or counted twice against the model. */
const countGaps = (expected: readonly ModelHour[], actual: readonly ModelHour[]) => {
  const cells = (hours: readonly ModelHour[]) => {
    const map = new Map<string, number>();
    for (const h of hours)
      for (const [status, s] of Object.entries(h.byStatus))
        map.set(`${h.hour} ${status}`, s.events);
    return map;
  };
  const want = cells(expected);
  const have = cells(actual);
  let lost = 0;
  let doubleCounted = 0;
  for (const key of new Set([...want.keys(), ...have.keys()])) {
    const gap = (have.get(key) ?? 0) - (want.get(key) ?? 0);
    if (gap < 0) lost -= gap;
    else doubleCounted += gap;
  }
  return { lost, doubleCounted };
};

/** Distinct quarantined bodies, distinct event conflicts (batch and event), too-late parts. */
const quarantined = async (world: World) => {
  const bodies = new Set<string>();
  const conflicts = new Set<string>();
  const tooLate = new Set<string>();
  for (const reject of await readRejects(world.store)) {
    if (reject.reason === 'too-late') {
      const part = v.parse(TooLatePartSchema, JSON.parse(reject.body));
      for (const hour of new Set(part.events.map((e) => hourOfEventTime(e.eventTime))))
        tooLate.add(`${reject.batchId} ${hour}`);
    } else if (reject.reason !== 'event-conflict') bodies.add(reject.body);
    else
      conflicts.add(
        JSON.stringify([reject.batchId, reject.conflict?.orderId, reject.conflict?.eventId]),
      );
  }
  return { bodies: bodies.size, conflicts: conflicts.size, tooLate };
};

/** The hours each batch's ledger entry recorded as too late (latePolicy quarantine). */
const lateDecisions = async (world: World, batches: readonly Batch[]) => {
  const ledger = new DynamoLedger(world.admin.dynamo, world.table);
  const decisions = new Map<string, ReadonlySet<string>>();
  for (const { batchId } of batches) {
    const late = (await ledger.entry(batchId))?.lateHours;
    if (late && late.size > 0) decisions.set(batchId, late);
  }
  return decisions;
};

/**
 * The late policy's promises: a batch refuses only hours that were closed; under quarantine a
 * batch sent after its hours were final refuses them, and nothing is ever amended (unless a
 * restore took marks away); under amend, a final hour that got a late event says so.
 */
const latePolicyDiffs = async (
  world: World,
  course: Course,
  decisions: ReadonlyMap<string, ReadonlySet<string>>,
  objects: Awaited<ReturnType<World['store']['listHourObjects']>>,
) => {
  const diffs: string[] = [];
  const decided = [...new Set([...decisions.values()].flatMap((h) => [...h]))];
  const marks = await new DynamoFinalMarks(world.admin.dynamo, world.table).marksOf(decided);
  const unmarked = decided.filter((hour) => !marks.has(hour));
  if (unmarked.length > 0) diffs.push(`refused hours that never closed: ${unmarked.join(', ')}`);
  const amendments = new Map(objects.map((o) => [o.aggregate.hour, o.lifecycle.amendments ?? 0]));
  for (const { batch, finalHours } of course.late?.late ?? []) {
    if (world.latePolicy === 'quarantine' && !course.restored) {
      const accepted = finalHours.filter((h) => !decisions.get(batch.batchId)?.has(h));
      if (accepted.length > 0)
        diffs.push(`${batch.batchId} applied events of final hours ${accepted.join(', ')}`);
    }
    if (world.latePolicy === 'amend') {
      const unsaid = finalHours.filter((h) => (amendments.get(h) ?? 0) === 0);
      if (unsaid.length > 0)
        diffs.push(`final hours ${unsaid.join(', ')} got late events without an amendment`);
    }
  }
  if (world.latePolicy === 'quarantine' && !course.restored) {
    const amended = [...amendments].filter(([, n]) => n > 0).map(([h]) => h);
    if (amended.length > 0) diffs.push(`amended under quarantine: ${amended.join(', ')}`);
  }
  return diffs;
};

/** Each day index lists exactly the final hours, with the revision their objects hold. */
const dayIndexDiffs = async (
  world: World,
  objects: Awaited<ReturnType<World['store']['listHourObjects']>>,
) => {
  const diffs: string[] = [];
  const listed = (await world.store.listDayIndexes()).flatMap((index) => index.hours);
  const byHour = new Map(objects.map((o) => [o.aggregate.hour, o]));
  for (const entry of listed) {
    const object = byHour.get(entry.hour);
    const revision = object?.lifecycle.final ? object.aggregate.revision : object ? -1 : 0;
    if (revision !== entry.revision)
      diffs.push(`day index lists ${entry.hour} at revision ${entry.revision}, object ${revision}`);
  }
  const unlisted = objects
    .filter((o) => o.lifecycle.final && !listed.some((e) => e.hour === o.aggregate.hour))
    .map((o) => o.aggregate.hour);
  if (unlisted.length > 0) diffs.push(`final hours missing from their day index: ${unlisted}`);
  return { diffs, finalHours: listed.length };
};

export const judge = async (world: World, s: ScheduleStream, course: Course): Promise<Verdict> => {
  // Re-sent and late events come after the batches they were drawn from, or race them with the
  // same content: the first content of each event is its original's either way.
  const batches = [
    ...(await expectedBatches(world, s)),
    ...course.resent.batches,
    ...(course.late?.batches ?? []),
  ];
  const decisions =
    world.latePolicy === 'quarantine' ? await lateDecisions(world, batches) : new Map();
  const model = referenceModel(batches, {
    refusedHours: (batch) => (batch.batchId ? decisions.get(batch.batchId) : undefined),
  });
  const orders = await new DynamoOrderReader(world.admin.dynamo, world.table).listOrders();
  const objects = await world.store.listHourObjects();
  const hours = objects.map(({ aggregate: { hour, events, byStatus } }) => ({
    hour,
    events,
    byStatus,
  }));
  const { lost, doubleCounted } = countGaps(model.hourly, hours);
  // Stale overwrites: orders not holding their newest event, and hour objects behind their counters.
  const want = new Map(model.orders.map((x) => [x.orderId, JSON.stringify(x)]));
  let staleOverwrites =
    orders.filter((x) => want.get(x.orderId) !== JSON.stringify(x)).length +
    course.behindOnceDrained.length;
  for (const hour of new Set([...hours.map((h) => h.hour), ...model.hourly.map((h) => h.hour)])) {
    if ((await planHour(hour, world.judgePorts)).action !== 'unchanged') staleOverwrites++;
  }
  const diffs: string[] = [];
  if (JSON.stringify(orders) !== JSON.stringify(model.orders))
    diffs.push(
      `orders: ${orders.length} found, ${model.orders.length} expected, ${staleOverwrites} differ`,
    );
  if (JSON.stringify(hours) !== JSON.stringify(model.hourly))
    diffs.push(`hourly: ${lost} events lost, ${doubleCounted} double-counted`);
  // Guarantee 6: once the aggregate queue drains, each hour's object equals its counters.
  if (course.behindOnceDrained.length > 0)
    diffs.push(`hour objects behind their counters once drained: ${course.behindOnceDrained}`);
  // Every invalid body, and the losing content of the reused id, is quarantined, and every
  // conflicting re-send of an event is reported once.
  const expectedRejects = s.stream.stats.invalid + 1 + (s.impostor ? 1 : 0);
  const rejects = await quarantined(world);
  if (rejects.bodies !== expectedRejects)
    diffs.push(
      `rejects: ${rejects.bodies} distinct bodies quarantined, ${expectedRejects} expected`,
    );
  if (rejects.conflicts !== model.conflicts)
    diffs.push(`event conflicts: ${rejects.conflicts} reported, ${model.conflicts} expected`);
  // Every refused part is in rejects/ (after a restore, also parts refused before it).
  const refused = [...decisions].flatMap(([batchId, late]) =>
    [...late].map((hour) => `${batchId} ${hour}`),
  );
  const unreported = refused.filter((part) => !rejects.tooLate.has(part));
  if (unreported.length > 0) diffs.push(`too-late parts not in rejects/: ${unreported}`);
  if (!course.restored && rejects.tooLate.size !== refused.length)
    diffs.push(`too-late rejects: ${rejects.tooLate.size}, ${refused.length} parts refused`);
  diffs.push(...(await latePolicyDiffs(world, course, decisions, objects)));
  const index = await dayIndexDiffs(world, objects);
  diffs.push(...index.diffs);
  diffs.push(...world.versions.violations());
  return {
    lost,
    doubleCounted,
    staleOverwrites,
    eventConflicts: rejects.conflicts,
    finalizedHours: index.finalHours,
    amendedHours: objects.filter((o) => (o.lifecycle.amendments ?? 0) > 0).length,
    tooLate: model.tooLate,
    versionsRead: world.versions.versions,
    diffs,
  };
};
