/**
 * The restore drill as a fault: a consistent copy of the table is taken at a quiet moment of the
 * run (the local stand-in for a point-in-time snapshot), the run goes on, and once it settled
 * the table is put back to that copy. Then the README's runbook, step by step: re-send the
 * archived batches received since the copy and those pending in the restored ledger, drain,
 * reconcile the hours they touch; the verdict is the verify.
 */
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { eventHoursOf, recoveryKeys } from '../../adapters/recovery.ts';
import { restoreTable, snapshotTable, type TableSnapshot } from '../../local/snapshot.ts';
import { planHour, publishHour } from '../../shared/aggregator.ts';
import { hoursBetween } from '../../shared/time.ts';
import type { Delivery } from './delivery.ts';
import type { World } from './world.ts';

export const takeSnapshot = (world: World): Promise<TableSnapshot> =>
  snapshotTable(world.admin.dynamo, world.table);

/** Restores the copy and runs the runbook; returns how many batches were re-sent. */
export const restoreAndReapply = async (
  world: World,
  delivery: Delivery,
  snapshot: TableSnapshot,
): Promise<number> => {
  await restoreTable(world.admin.dynamo, world.table, snapshot);
  // onceflow replay archive --received-from <copy time> --pending
  const keys = await recoveryKeys(world.store, new DynamoLedger(world.admin.dynamo, world.table), {
    receivedFromMs: snapshot.takenAtMs,
    pending: true,
  });
  const bodies: string[] = [];
  for (const key of keys) {
    const body = await world.store.getText(key);
    if (body !== undefined) bodies.push(body);
  }
  await delivery.send(bodies);
  // onceflow drain
  await delivery.runAll();
  await delivery.settle(5);
  // onceflow reconcile --from … --to … (the hours the re-sent batches touch)
  const hours = eventHoursOf(bodies);
  if (hours) {
    for (const hour of hoursBetween(hours.fromMs, hours.toMs)) {
      const { stored, aggregate, action } = await planHour(hour, world.judgePorts);
      if ((stored || aggregate.events > 0) && action !== 'unchanged')
        await publishHour(hour, world.judgePorts);
    }
  }
  return bodies.length;
};
