/**
 * The course of a schedule: half the stream, a DLQ redrive, applied events re-sent in new
 * batches, in some schedules events later than the allowed lateness (`lateness.ts`), the rest
 * with copies of events regrouped under new ids racing their originals,
 * an archive replay and a reconcile mid-run while the finalizer runs, then whatever failed too
 * often redriven until everything settles; in some schedules, the table restored to a copy taken
 * earlier and the runbook's recovery; at the end the finalizer finishes what the watermark passed.
 */

import { DynamoCounterReader } from '../../adapters/dynamo-counters.ts';
import type { TableSnapshot } from '../../local/snapshot.ts';
import { planHour, publishHour } from '../../shared/aggregator.ts';
import { RAW_PREFIX } from '../../shared/keys.ts';
import type { Delivery } from './delivery.ts';
import type { Dice } from './dice.ts';
import { finalizeDespiteFaults, finalizeTwice, type LateSend, sendLateEvents } from './lateness.ts';
import { type Resent, regroupAlongside, resendSomeEvents } from './resend.ts';
import { restoreAndReapply, takeSnapshot } from './restore.ts';
import type { ScheduleStream } from './stream.ts';
import type { World } from './world.ts';

/** Re-sends about 30% of the archived batches, as `onceflow replay archive` would. */
const replaySomeOfTheArchive = async (world: World, delivery: Delivery, dice: Dice) => {
  const keys = (await world.store.listKeys(RAW_PREFIX)).filter(() => dice.chance(0.3));
  const bodies: string[] = [];
  for (const key of keys) bodies.push((await world.store.getText(key)) ?? '');
  await delivery.send(bodies);
};

/** Republishes about 30% of the published hours, as `onceflow reconcile` would, racing the aggregator. */
const reconcileSomeHours = async (world: World, dice: Dice) => {
  const hours = (await world.store.listAggregates()).map((a) => a.hour);
  for (const hour of hours.filter(() => dice.chance(0.3)))
    await publishHour(hour, world.aggregatorPorts).catch(() => undefined);
};

/** The hours (with counters or an object) whose object is not what their counters say. */
export const hoursBehindCounters = async (world: World): Promise<string[]> => {
  const hours = new Set([
    ...(await new DynamoCounterReader(world.admin.dynamo, world.table).hours()),
    ...(await world.store.listAggregates()).map((a) => a.hour),
  ]);
  const behind: string[] = [];
  for (const hour of [...hours].sort())
    if ((await planHour(hour, world.judgePorts)).action !== 'unchanged') behind.push(hour);
  return behind;
};

export interface Played {
  /** Events re-sent in new batches: after their originals applied, and racing them. */
  readonly resent: Resent;
  /** Batches re-sent by the restore drill; undefined when the schedule had none. */
  readonly restoreResent: number | undefined;
  /** What the late-events fault sent; undefined when the schedule had none. */
  readonly late: LateSend | undefined;
  /**
   * Hours whose object differed from its counters once every queue had drained, before the
   * finalizer (which republishes what it finalizes) and the restore drill: notifications lost.
   */
  readonly behindOnceDrained: readonly string[];
}

export const play = async (
  world: World,
  delivery: Delivery,
  dice: Dice,
  s: ScheduleStream,
  o: { seed: number; restore: boolean; lateEvents: boolean },
): Promise<Played> => {
  const { orders, ordersDlq } = world.copy.queues;
  // Where the drill's copy is taken: after the first half applied, after the second, or at the
  // end. (Not before the first: then an original and a conflicting copy of one of its events
  // would both be re-sent, and either may win the race; see the README's limits.)
  const copyAt = o.restore ? dice.int(0, 2) : -1;
  let snapshot: TableSnapshot | undefined;
  const half = Math.ceil(s.sends.length / 2);
  await delivery.send(s.sends.slice(0, half));
  await delivery.runAll();
  if (copyAt === 0) snapshot = await takeSnapshot(world);
  await delivery.redrive(ordersDlq, orders);
  const resent = await resendSomeEvents(world, dice, o.seed, s.stream.batches, delivery.send);
  const late = o.lateEvents
    ? await sendLateEvents(world, delivery, dice, o.seed, s.stream.batches)
    : undefined;
  // The second half goes with copies of events regrouped under new ids, racing their
  // originals (or following them, for events of the first half).
  const regrouped = regroupAlongside(dice, o.seed, s.stream.batches, s.victim?.batchId);
  await delivery.send(
    dice.shuffle([...s.sends.slice(half), ...regrouped.batches.map((b) => JSON.stringify(b))]),
  );
  await replaySomeOfTheArchive(world, delivery, dice);
  await reconcileSomeHours(world, dice);
  // With late events, the finalizer's schedule also fires while the functions work: hours
  // close as batches decide.
  await Promise.all([delivery.runAll(), ...(late ? [finalizeDespiteFaults(world)] : [])]);
  if (copyAt === 1) snapshot = await takeSnapshot(world);
  await delivery.settle(5);
  const behindOnceDrained = await hoursBehindCounters(world);
  if (copyAt === 2) snapshot = await takeSnapshot(world);
  const restoreResent = snapshot ? await restoreAndReapply(world, delivery, snapshot) : undefined;
  // Whatever the watermark passed ends final (the versions read on the way are kept); without
  // late events, once (the finalizer's restart after a restore, a crash, a backlog is in
  // schedules of both kinds).
  if (late) await finalizeTwice(world);
  else await finalizeDespiteFaults(world);
  return {
    resent: {
      batches: [...resent.batches, ...regrouped.batches],
      events: resent.events + regrouped.events,
    },
    restoreResent,
    late,
    behindOnceDrained,
  };
};
