/**
 * Randomized fault schedules that check exactly-once: each schedule generates a stream
 * (duplicates, late events, invalid bodies, a reused batch id with other content), runs it
 * through the functions on a copy of the synthesized stack while faults drawn from its seed fire
 * (crashes before and after every side-effecting call, throttling, transaction conflicts, S3
 * 409s, reads of orders answered only after another environment wrote, concurrent twins of a
 * delivery, duplicate sends, reordering, a DLQ redrive, applied
 * events re-sent in new batches, some with other content, an archive replay, a reconcile,
 * aggregator runs finishing out of order, the table restored to an earlier copy and recovered
 * by the runbook, events later than the allowed lateness under either late policy, the
 * finalizer running while the functions work), drains, and compares the end
 * state with a reference model. The steps live in `chaos/`: the world (`world.ts`), the stream
 * (`stream.ts`), the faults (`draw-faults.ts`), delivery (`delivery.ts`), late events
 * (`lateness.ts`), the course of a schedule (`play.ts`), the hour object versions read on the way
 * (`versions.ts`) and the verdict (`judge.ts`).
 */
import type { StackCopy } from '../local/stack-copy.ts';
import { maxReceiveCount } from '../local/stack-copy.ts';
import { mapLimit } from '../shared/concurrency.ts';
import type { LatePolicy } from '../shared/late-policy.ts';
import { deliveryFor } from './chaos/delivery.ts';
import { type Dice, diceFor } from './chaos/dice.ts';
import { CRASH_POINTS, drawFaults } from './chaos/draw-faults.ts';
import { judge } from './chaos/judge.ts';
import { play } from './chaos/play.ts';
import { drawStream } from './chaos/stream.ts';
import { buildWorld, type World } from './chaos/world.ts';

export { CRASH_POINTS, CRASH_SITES } from './chaos/draw-faults.ts';

export interface ScheduleResult {
  readonly seed: number;
  readonly events: number;
  readonly lost: number;
  readonly doubleCounted: number;
  readonly staleOverwrites: number;
  readonly mismatches: number;
  readonly crashPoints: readonly string[];
  /** 409 ConditionalRequestConflict answers injected on archive writes. */
  readonly s3Conflicts: number;
  /** Commit attempts cancelled by an injected TransactionConflict. */
  readonly transactionConflicts: number;
  /** Reads of orders answered only after another write of an order (stale when settled from). */
  readonly staleReads: number;
  /** Hour notifications SQS failed on its side (one entry of a batch), sent again. */
  readonly entryFailures: number;
  /** Batch reads DynamoDB answered in part (keys returned unprocessed), asked again. */
  readonly partialReads: number;
  /** Queries, scans and listings answered one item a page, followed to the end. */
  readonly shortPages: number;
  /** Whether the schedule sent batches at the contract's bounds. */
  readonly wide: boolean;
  /** Applied events re-sent in new batches mid-run, and the conflicting ones reported. */
  readonly resentEvents: number;
  readonly eventConflicts: number;
  /** Whether the table was restored to an earlier copy and recovered by the runbook. */
  readonly restored: boolean;
  readonly latePolicy: LatePolicy;
  /** Whether events later than the allowed lateness were sent. */
  readonly lateEvents: boolean;
  readonly finalizedHours: number;
  readonly amendedHours: number;
  readonly tooLate: number;
  readonly versionsRead: number;
  readonly diff?: string;
}

export interface ChaosSummary {
  readonly schedules: number;
  readonly events: number;
  readonly lost: number;
  readonly doubleCounted: number;
  readonly staleOverwrites: number;
  readonly mismatches: number;
  readonly s3Conflicts: number;
  readonly transactionConflicts: number;
  readonly staleReads: number;
  readonly entryFailures: number;
  readonly partialReads: number;
  readonly shortPages: number;
  readonly wideSchedules: number;
  readonly resentEvents: number;
  readonly eventConflicts: number;
  readonly restores: number;
  /** Schedules under latePolicy quarantine, and schedules with events later than the lateness. */
  readonly quarantineSchedules: number;
  readonly lateSchedules: number;
  readonly finalizedHours: number;
  readonly amendedHours: number;
  readonly tooLate: number;
  readonly versionsRead: number;
  readonly crashPoints: { covered: number; total: number };
  readonly failures: { seed: number; diff: string }[];
}

/** The seed of schedule `index` of a run: rerun one alone with --schedule-seed. */
export const scheduleSeed = (runSeed: number, index: number) =>
  ((runSeed * 1_000_003 + index * 7_919) >>> 0) % 2_147_483_647;

export interface ScheduleOptions {
  /** The local edge. */
  readonly endpoint: string;
  /** The synthesized stack each schedule provisions a copy of. */
  readonly assemblyDir: string;
  readonly seed: number;
  readonly orders: number;
  /** The crash point this schedule must exercise (forced on its first call). */
  readonly mandatoryPoint?: string;
  /** Whether to run the restore drill; default drawn from the seed (about one in five). */
  readonly restore?: boolean;
  /** Whether to send events later than the allowed lateness; default drawn (one in two). */
  readonly lateEvents?: boolean;
  /** Default drawn from the seed (one in two). */
  readonly latePolicy?: LatePolicy;
  /** Told about the stack copy the schedule runs on (tests compare it with the template). */
  readonly onProvisioned?: (copy: StackCopy) => void | Promise<void>;
}

export const runSchedule = async (o: ScheduleOptions): Promise<ScheduleResult> => {
  const dice = diceFor(o.seed);
  const world = await buildWorld(
    { ...o, ...(o.latePolicy === undefined ? {} : { latePolicy: o.latePolicy }) },
    dice,
  );
  // The copy is deleted however the schedule ends: a long run holds only the copies in use.
  try {
    return await playSchedule(world, dice, o);
  } finally {
    await world.dispose();
  }
};

const playSchedule = async (
  world: World,
  dice: Dice,
  o: ScheduleOptions,
): Promise<ScheduleResult> => {
  const stream = drawStream(dice, o.seed, o.orders);
  drawFaults(dice, world.faults, {
    ...(o.mandatoryPoint === undefined ? {} : { mandatoryPoint: o.mandatoryPoint }),
    batchIds: stream.stream.batches.map((b) => b.batchId),
    maxReceives: maxReceiveCount(world.copy.queues.orders),
  });
  // A restore drill in about a fifth of the schedules, and wherever the caller asks for one.
  const restore = o.restore ?? dice.chance(0.2);
  const lateEvents = o.lateEvents ?? dice.chance(0.5);
  const { resent, restoreResent, late, behindOnceDrained } = await play(
    world,
    deliveryFor(world, dice),
    dice,
    stream,
    { seed: o.seed, restore, lateEvents },
  );
  const restored = restoreResent !== undefined;
  const verdict = await judge(world, stream, { resent, late, restored, behindOnceDrained });
  const fired = world.faults.fired;
  return {
    seed: o.seed,
    events: stream.stream.stats.events,
    lost: verdict.lost,
    doubleCounted: verdict.doubleCounted,
    staleOverwrites: verdict.staleOverwrites,
    mismatches: verdict.diffs.length,
    crashPoints: fired.filter((f) => f.startsWith('crash-')),
    s3Conflicts: fired.filter((f) => f.startsWith('s3-conflict')).length,
    transactionConflicts: fired.filter((f) => f.startsWith('transaction-conflict')).length,
    staleReads: fired.filter((f) => f.startsWith('stale-read')).length,
    entryFailures: fired.filter((f) => f.startsWith('entry-failure')).length,
    partialReads: fired.filter((f) => f.startsWith('unprocessed-keys')).length,
    shortPages: fired.filter((f) => f.startsWith('short-pages')).length,
    wide: stream.wide,
    resentEvents: resent.events,
    eventConflicts: verdict.eventConflicts,
    restored,
    latePolicy: world.latePolicy,
    lateEvents,
    finalizedHours: verdict.finalizedHours,
    amendedHours: verdict.amendedHours,
    tooLate: verdict.tooLate,
    versionsRead: verdict.versionsRead,
    ...(verdict.diffs.length ? { diff: verdict.diffs.join('; ') } : {}),
  };
};

export interface ChaosOptions {
  readonly endpoint: string;
  readonly assemblyDir: string;
  readonly schedules: number;
  readonly seed: number;
  readonly orders: number;
  /** Schedules run at once. Default 2. */
  readonly concurrency?: number;
  /** Told of each schedule as it ends (in the order they end). */
  readonly onSchedule?: (result: ScheduleResult, index: number) => void;
}

export const runChaos = async (o: ChaosOptions): Promise<ChaosSummary> => {
  // Schedules are independent (each provisions its own copy of the stack): several at once
  // overlap their waits (the aggregate queue's delay, backoffs), and are folded in order.
  const results = await mapLimit(
    Array.from({ length: o.schedules }, (_, i) => i),
    o.concurrency ?? 2,
    async (i) => {
      // Every crash point is forced in turn, so any run of 16+ schedules covers them all.
      const point = CRASH_POINTS[i % CRASH_POINTS.length];
      const result = await runSchedule({
        endpoint: o.endpoint,
        assemblyDir: o.assemblyDir,
        seed: scheduleSeed(o.seed, i),
        orders: o.orders,
        ...(point === undefined ? {} : { mandatoryPoint: point }),
        // The first schedule of every run restores, so any run includes the drill; every other
        // one sends events later than the lateness, alternating the two late policies, so any
        // run of 4+ schedules has both policies meeting late events.
        ...(i === 0 ? { restore: true } : {}),
        lateEvents: i % 2 === 0,
        latePolicy: i % 4 < 2 ? 'quarantine' : 'amend',
      });
      o.onSchedule?.(result, i);
      return result;
    },
  );
  return foldSchedules(results);
};

/**
 * Schedules' results as one summary, in the order given: every figure summed (a schedule that
 * found a mismatch is never hidden by the clean ones after it), crash points covered by any.
 */
export const foldSchedules = (results: readonly ScheduleResult[]): ChaosSummary => {
  const covered = new Set(results.flatMap((r) => r.crashPoints));
  const sum = (figure: (r: ScheduleResult) => number) =>
    results.reduce((total, r) => total + figure(r), 0);
  const count = (holds: (r: ScheduleResult) => boolean) => results.filter(holds).length;
  return {
    schedules: results.length,
    events: sum((r) => r.events),
    lost: sum((r) => r.lost),
    doubleCounted: sum((r) => r.doubleCounted),
    staleOverwrites: sum((r) => r.staleOverwrites),
    mismatches: sum((r) => r.mismatches),
    s3Conflicts: sum((r) => r.s3Conflicts),
    transactionConflicts: sum((r) => r.transactionConflicts),
    staleReads: sum((r) => r.staleReads),
    entryFailures: sum((r) => r.entryFailures),
    partialReads: sum((r) => r.partialReads),
    shortPages: sum((r) => r.shortPages),
    wideSchedules: count((r) => r.wide),
    resentEvents: sum((r) => r.resentEvents),
    eventConflicts: sum((r) => r.eventConflicts),
    restores: count((r) => r.restored),
    quarantineSchedules: count((r) => r.latePolicy === 'quarantine'),
    lateSchedules: count((r) => r.lateEvents),
    finalizedHours: sum((r) => r.finalizedHours),
    amendedHours: sum((r) => r.amendedHours),
    tooLate: sum((r) => r.tooLate),
    versionsRead: sum((r) => r.versionsRead),
    crashPoints: {
      covered: CRASH_POINTS.filter((p) => covered.has(p)).length,
      total: CRASH_POINTS.length,
    },
    failures: results.flatMap((r) => (r.diff ? [{ seed: r.seed, diff: r.diff }] : [])),
  };
};

/** One schedule's result as a summary (`onceflow chaos --schedule-seed`). */
export const summaryOf = (r: ScheduleResult): ChaosSummary => foldSchedules([r]);

/**
 * What `onceflow chaos` exits with: 1 on any mismatch, and for a run of several schedules also
 * when some crash point went unexercised (its proof is incomplete), with why.
 */
export const exitOf = (
  s: ChaosSummary,
  oneSchedule: boolean,
): { readonly code: 0 | 1; readonly why?: string } => {
  const { covered, total } = s.crashPoints;
  if (s.mismatches > 0) return { code: 1 };
  if (oneSchedule || covered >= total) return { code: 0 };
  return {
    code: 1,
    why: `only ${covered} of ${total} crash points were exercised: each is forced in turn, so run ${total} or more schedules to prove them all`,
  };
};

export const formatSummary = (s: ChaosSummary) =>
  `${s.schedules.toLocaleString('en-US')} schedules, ${s.events.toLocaleString('en-US')} events, ${s.lost} lost, ${s.doubleCounted} double-counted, ` +
  `${s.staleOverwrites} stale overwrites, ${s.mismatches} mismatches; crash points covered ${s.crashPoints.covered}/${s.crashPoints.total}; ` +
  `${s.s3Conflicts} S3 409s on the archive, ${s.transactionConflicts} commit attempts cancelled by transaction conflicts, ${s.staleReads} order reads answered after another write, ${s.entryFailures} hour notifications failed by SQS and sent again, ${s.partialReads} batch reads answered in part and asked again, ${s.shortPages} listings answered one item a page, ${s.wideSchedules} schedules with batches at the contract's bounds; ` +
  `${s.resentEvents.toLocaleString('en-US')} events re-sent in new batches (after their originals applied, or racing them), ${s.eventConflicts} event conflicts reported; ` +
  `${s.restores} table restores recovered by the runbook; ` +
  `${s.quarantineSchedules} schedules under latePolicy quarantine, ${s.lateSchedules} with events later than the lateness: ` +
  `${s.finalizedHours.toLocaleString('en-US')} hours finalized, ${s.amendedHours} amended, ${s.tooLate.toLocaleString('en-US')} events refused too-late, ` +
  `${s.versionsRead.toLocaleString('en-US')} hour object versions read`;
