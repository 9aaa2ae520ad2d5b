/** The faults of one schedule, drawn from its seed. */
import { setTimeout as delay } from 'node:timers/promises';
import { touchesLedgerOf } from '../../adapters/dynamo.ts';
import { readsOrders } from '../../adapters/dynamo-orders.ts';
import { type FaultInjector, type FaultKind, SIDE_EFFECT_SITES } from '../faults.ts';
import type { Dice } from './dice.ts';

/** The call sites whose crash (before or after) must be exercised: 8 sites × 2 = 16 points. */
export const CRASH_SITES = SIDE_EFFECT_SITES.filter((site) => site !== 'DeleteObject:aggregates');
export const CRASH_POINTS = CRASH_SITES.flatMap((site) => [
  `crash-before@${site}`,
  `crash-after@${site}`,
]);

/** How long a stale read waits at most for another write to overtake it. */
const STALE_READ_MS = 250;

export interface FaultDraw {
  /** The crash point this schedule must exercise; default one drawn at random. */
  readonly mandatoryPoint?: string;
  /** Batches one may poison (to fail until its message reaches the DLQ). */
  readonly batchIds: readonly string[];
  /** The orders queue's maxReceiveCount: how often a poisoned batch must fail. */
  readonly maxReceives: number;
}

export const drawFaults = (dice: Dice, faults: FaultInjector, o: FaultDraw): void => {
  const drawn = [o.mandatoryPoint ?? dice.pick(CRASH_POINTS)];
  for (let i = dice.int(0, 3); i > 0; i--) drawn.push(dice.pick(CRASH_POINTS));
  for (const [i, point] of drawn.entries()) {
    const [kind, site] = point.split('@') as [FaultKind, string];
    // The schedule's own crash point fires on its first call, so it is sure to be exercised.
    faults.add({ site, kind, nth: i === 0 ? 1 : dice.int(1, 3) });
  }
  if (dice.chance(0.5)) {
    const site = dice.pick(['UpdateItem:order', 'PutItem:batch']);
    faults.add({ site, kind: 'throttle', nth: dice.int(1, 4) });
  }
  // Conflicts on a commit, sometimes on more attempts than the ledger makes (four), so that the
  // delivery fails and comes back.
  if (dice.chance(0.5)) {
    const times = dice.int(1, 5);
    faults.add({
      site: 'TransactWriteItems',
      kind: 'transaction-conflict',
      nth: dice.int(1, 4),
      times,
    });
  }
  if (dice.chance(0.5)) {
    const site = dice.pick(['SendMessageBatch', 'PutObject:raw', 'PutObject:aggregates']);
    faults.add({ site, kind: 'throttling', nth: dice.int(1, 4) });
  }
  // S3 answers the create-only archive write 409 ConditionalRequestConflict, sometimes long
  // enough to fail the delivery (the archive write tries four times).
  if (dice.chance(0.4)) {
    const times = dice.int(1, 5);
    faults.add({ site: 'PutObject:raw', kind: 's3-conflict', nth: dice.int(1, 3), times });
  }
  // One batch keeps failing until it lands in the DLQ; it is redriven mid-run.
  const poisoned = dice.chance(0.5) && o.batchIds.length > 0 ? dice.pick(o.batchIds) : undefined;
  if (poisoned) {
    faults.add({
      site: 'PutItem:batch',
      kind: 'crash-before',
      times: o.maxReceives,
      when: touchesLedgerOf(poisoned),
    });
  }
  // An environment's read of its orders answered only once another order write has finished
  // (or a moment later, when nothing else writes): it settles from what is no longer stored,
  // and only DynamoDB's conditions stand between it and the writer that overtook it.
  if (dice.chance(0.5)) {
    faults.add({
      site: 'BatchGetItem',
      kind: 'stale-read',
      when: readsOrders,
      nth: dice.int(1, 3),
      times: dice.int(1, 4),
      release: () => Promise.race([faults.nextDone('UpdateItem:order'), delay(STALE_READ_MS)]),
    });
  }
  // SQS fails an hour notification's entry on its side, sometimes on every attempt the notifier
  // makes (three), so that the delivery fails and its redelivery notifies again.
  if (dice.chance(0.4)) {
    faults.add({
      site: 'SendMessageBatch',
      kind: 'entry-failure',
      nth: dice.int(1, 12),
      times: dice.int(1, 3),
    });
  }
  // DynamoDB answers part of a batch read (the orders a batch settles against, the finalizer's
  // marks): the rest comes back as unprocessed keys, to be asked for again.
  if (dice.chance(0.4)) {
    faults.add({
      site: 'BatchGetItem',
      kind: 'unprocessed-keys',
      nth: dice.int(1, 6),
      times: dice.int(1, 4),
    });
  }
  // Listings answered one item a page (DynamoDB's queries and scans, S3's listings), as past
  // 1 MB or 1,000 keys: the counters an hour is recomputed from, the pending index, the archive.
  if (dice.chance(0.3)) {
    const times = dice.int(5, 40);
    for (const site of ['Query', 'Scan', 'ListObjectsV2'])
      faults.add({ site, kind: 'short-pages', nth: dice.int(1, 4), times });
  }
};
