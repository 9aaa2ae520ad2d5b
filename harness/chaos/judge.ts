/**
 * Comparing what a schedule left behind with the reference model: events lost or counted twice
 * cell by cell, orders not holding their newest event, hour objects behind their counters, and
 * bodies that should have been quarantined.
 */
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { DynamoOrderStore } from '../../adapters/dynamo-orders.ts';
import { planHour } from '../../shared/aggregator.ts';
import { batchDigest } from '../../shared/digest.ts';
import { REJECT_PREFIX } from '../../shared/keys.ts';
import { validateBatch } from '../../shared/schema.ts';
import type { GeneratedEvent } from '../generate.ts';
import { type ModelHour, referenceModel } from '../model.ts';
import type { Resent } from './resend.ts';
import type { ScheduleStream } from './stream.ts';
import type { World } from './world.ts';

export interface Verdict {
  readonly lost: number;
  readonly doubleCounted: number;
  readonly staleOverwrites: number;
  /** Event conflicts reported (one per re-sending batch and event). */
  readonly eventConflicts: number;
  readonly diffs: readonly string[];
}

type Batch = { batchId: string; events: GeneratedEvent[] };

/** Every distinct valid batch once; for the reused id, whichever content the ledger kept. */
const expectedBatches = async (world: World, s: ScheduleStream): Promise<Batch[]> => {
  const batches: Batch[] = [...s.stream.batches];
  if (!s.victim || !s.impostor) return batches;
  const entry = await new DynamoLedger(world.admin.dynamo, world.table).entry(s.victim.batchId);
  const parsed = validateBatch(JSON.parse(s.impostor));
  if (parsed.ok && entry?.digest === batchDigest(parsed.batch)) {
    const i = batches.findIndex((b) => b.batchId === s.victim?.batchId);
    batches[i] = JSON.parse(s.impostor) as Batch;
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

/** Distinct quarantined bodies, and distinct event conflicts (batch and event). */
const quarantined = async (world: World) => {
  const bodies = new Set<string>();
  const conflicts = new Set<string>();
  for (const key of await world.store.listKeys(REJECT_PREFIX)) {
    const text = (await world.store.getText(key)) ?? '{}';
    const reject = JSON.parse(text) as {
      body: string;
      reason: string;
      batchId?: string;
      conflict?: { orderId: string; eventId: string };
    };
    if (reject.reason !== 'event-conflict') bodies.add(reject.body);
    else
      conflicts.add(
        JSON.stringify([reject.batchId, reject.conflict?.orderId, reject.conflict?.eventId]),
      );
  }
  return { bodies: bodies.size, conflicts: conflicts.size };
};

export const judge = async (world: World, s: ScheduleStream, resent: Resent): Promise<Verdict> => {
  // Re-sent events come after the batches they were drawn from were applied.
  const model = referenceModel([...(await expectedBatches(world, s)), ...resent.batches]);
  const orders = await new DynamoOrderStore(world.admin.dynamo, world.table).listOrders();
  const hours = (await world.store.listAggregates()).map(({ hour, events, byStatus }) => ({
    hour,
    events,
    byStatus,
  }));
  const { lost, doubleCounted } = countGaps(model.hourly, hours);
  // Stale overwrites: orders not holding their newest event, and hour objects behind their counters.
  const want = new Map(model.orders.map((x) => [x.orderId, JSON.stringify(x)]));
  let staleOverwrites = orders.filter((x) => want.get(x.orderId) !== JSON.stringify(x)).length;
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
  return { lost, doubleCounted, staleOverwrites, eventConflicts: rejects.conflicts, diffs };
};
