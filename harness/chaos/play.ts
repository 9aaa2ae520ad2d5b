/**
 * The course of a schedule: half the stream, a DLQ redrive, applied events re-sent in new
 * batches, the rest, an archive replay and a reconcile mid-run, then whatever failed too often
 * redriven until everything settles.
 */
import { publishHour } from '../../shared/aggregator.ts';
import { RAW_PREFIX } from '../../shared/keys.ts';
import type { Delivery } from './delivery.ts';
import type { Dice } from './dice.ts';
import { type Resent, resendSomeEvents } from './resend.ts';
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

export const play = async (
  world: World,
  delivery: Delivery,
  dice: Dice,
  s: ScheduleStream,
  seed: number,
): Promise<Resent> => {
  const { orders, ordersDlq } = world.copy.queues;
  const half = Math.ceil(s.sends.length / 2);
  await delivery.send(s.sends.slice(0, half));
  await delivery.runAll();
  await delivery.redrive(ordersDlq, orders);
  const resent = await resendSomeEvents(world, dice, seed, s.stream.batches, delivery.send);
  await delivery.send(s.sends.slice(half));
  await replaySomeOfTheArchive(world, delivery, dice);
  await reconcileSomeHours(world, dice);
  await delivery.runAll();
  await delivery.settle(5);
  return resent;
};
