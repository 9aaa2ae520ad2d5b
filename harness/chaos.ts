/**
 * Randomized fault schedules that check exactly-once: each schedule generates a stream
 * (duplicates, late events, invalid bodies, a reused batch id with other content), runs it
 * through the functions over real queues while faults drawn from its seed fire (crashes before
 * and after every side-effecting call, throttling, transaction conflicts, concurrent twins of a
 * delivery, duplicate sends, reordering, a DLQ redrive, an archive replay, a reconcile,
 * aggregator runs finishing out of order), drains, and compares the end state with a reference
 * model. All faults come from SDK middleware and the driver; the functions are the real ones.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  ListMessageMoveTasksCommand,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import type { AwsClients } from '../adapters/clients.ts';
import { DynamoLedger, DynamoOrderStore, touchesLedgerOf } from '../adapters/dynamo.ts';
import { S3Store } from '../adapters/s3.ts';
import { queueDepth, sendBodies } from '../adapters/sqs.ts';
import { aggregatorPorts, ingestPorts, ingestSettings } from '../adapters/wiring.ts';
import { createAggregateHandler } from '../functions/aggregate-hours.ts';
import { createIngestHandler } from '../functions/ingest-orders.ts';
import { adminClients } from '../local/clients.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../local/emulators.ts';
import { lambdaContext } from '../local/lambda-context.ts';
import { waitFor } from '../local/net.ts';
import { drainQueue } from '../local/sqs-poller.ts';
import { maxReceiveCount, provisionStackCopy, type StackCopy } from '../local/stack-copy.ts';
import { planHour, publishHour } from '../shared/aggregator.ts';
import { loadAggregateConfig, loadIngestConfig } from '../shared/config.ts';
import { CURRENCIES } from '../shared/currencies.ts';
import { batchDigest } from '../shared/digest.ts';
import { RAW_PREFIX } from '../shared/keys.ts';
import { validateBatch } from '../shared/schema.ts';
import { FaultInjector, type FaultKind, SIDE_EFFECT_SITES } from './faults.ts';
import { type GeneratedEvent, generateStream } from './generate.ts';
import { referenceModel } from './model.ts';

/** The call sites whose crash (before or after) must be exercised: 7 sites × 2 = 14 points. */
export const CRASH_SITES = SIDE_EFFECT_SITES.filter((site) => site !== 'DeleteObject:aggregates');
export const CRASH_POINTS = CRASH_SITES.flatMap((site) => [
  `crash-before@${site}`,
  `crash-after@${site}`,
]);

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
  /** Whether the schedule sent batches at the contract's bounds. */
  readonly wide: boolean;
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
  readonly wideSchedules: number;
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
  /** Told about the stack copy the schedule runs on (tests compare it with the template). */
  readonly onProvisioned?: (copy: StackCopy) => void;
}

export const runSchedule = async (o: ScheduleOptions): Promise<ScheduleResult> => {
  const { endpoint, seed, mandatoryPoint } = o;
  const orderCount = o.orders;
  const rng = xoroshiro128plus(seed);
  const int = (min: number, max: number) => uniformInt(rng, min, max);
  const chance = (p: number) => int(0, 9999) < p * 10_000;
  const admin = adminClients(endpoint, LOCAL_REGION);

  // Resources: a copy of the synthesized stack, exactly as the template defines it.
  const copy = await provisionStackCopy({
    assemblyDir: o.assemblyDir,
    endpoint,
    name: `chaos-${seed}-${randomUUID().slice(0, 8)}`,
  });
  o.onProvisioned?.(copy);
  const table = copy.outputs.TableName ?? '';
  const bucket = copy.outputs.BucketName ?? '';
  const { orders, ordersDlq, aggregate, aggregateDlq } = copy.queues;
  const maxReceives = maxReceiveCount(orders);
  const ingestEnv = copy.ingestEnvironment;
  const aggregateEnv = copy.aggregateEnvironment;
  const config = { endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const faults = new FaultInjector();
  const clients: AwsClients = {
    dynamo: faults.attach(new DynamoDBClient(config)),
    s3: faults.attach(new S3Client({ ...config, forcePathStyle: true })),
    sqs: faults.attach(new SQSClient(config)),
  };
  // Aggregator writes finish in a shuffled order.
  clients.s3.middlewareStack.add(
    (next, context) => async (args) => {
      if (
        context.commandName === 'PutObjectCommand' &&
        String((args.input as { Key?: string }).Key).startsWith('aggregates/') &&
        chance(0.3)
      ) {
        await new Promise((r) => setTimeout(r, int(1, 15)));
      }
      return next(args);
    },
    { step: 'initialize', name: 'chaosStall' },
  );

  // The stream: duplicates, late events, invalid bodies, and one batch id reused with other content.
  // Some schedules send batches at the contract's bounds: up to 500 events over many hours and
  // every ISO 4217 currency, so commits split into several parts.
  const wide = chance(0.06);
  const stream = generateStream({
    orders: wide ? 160 : orderCount,
    hours: wide ? int(24, 96) : int(2, 6),
    seed,
    batchSize: wide ? 500 : int(2, 12),
    duplicateRate: 0.2,
    lateRate: 0.15,
    invalidRate: 0.1,
    ...(wide || chance(0.5) ? { currencies: CURRENCIES } : {}),
  });
  const victim = stream.batches[int(0, stream.batches.length - 1)];
  const impostor = victim
    ? JSON.stringify({
        batchId: victim.batchId,
        events: victim.events.map((e, i) => (i === 0 ? { ...e, customerId: 'impostor' } : e)),
      })
    : undefined;
  // At least one invalid body, so the quarantine's call site is always exercised.
  const invalid = JSON.stringify({ batchId: `chaos-invalid-${seed}`, events: [] });
  const lines = [...stream.lines, invalid, ...(impostor ? [impostor] : [])];
  // Reordering, and duplicate sends (a producer retrying: new message ids).
  const sends = lines.flatMap((line) => (chance(0.1) ? [line, line] : [line]));
  for (let i = sends.length - 1; i > 0; i--) {
    const j = int(0, i);
    [sends[i], sends[j]] = [sends[j] ?? '', sends[i] ?? ''];
  }

  // Faults: the mandatory crash point of this schedule, plus a few drawn at random.
  const pick = <T>(items: readonly T[]) => items[int(0, items.length - 1)] as T;
  const drawn = [mandatoryPoint ?? pick(CRASH_POINTS)];
  for (let i = int(0, 3); i > 0; i--) drawn.push(pick(CRASH_POINTS));
  for (const [i, point] of drawn.entries()) {
    const [kind, site] = point.split('@') as [FaultKind, string];
    // The schedule's own crash point fires on its first call, so it is sure to be exercised.
    faults.add({ site, kind, nth: i === 0 ? 1 : int(1, 3) });
  }
  if (chance(0.5))
    faults.add({
      site: pick(['PutItem:order', 'PutItem:batch']),
      kind: 'throttle',
      nth: int(1, 4),
    });
  if (chance(0.5))
    faults.add({ site: 'TransactWriteItems', kind: 'transaction-conflict', nth: int(1, 4) });
  if (chance(0.5)) {
    faults.add({
      site: pick(['SendMessageBatch', 'PutObject:raw', 'PutObject:aggregates']),
      kind: 'throttling',
      nth: int(1, 4),
    });
  }
  // S3 answers the create-only archive write 409 ConditionalRequestConflict, sometimes long
  // enough to fail the delivery (the archive write tries four times).
  if (chance(0.4))
    faults.add({ site: 'PutObject:raw', kind: 's3-conflict', nth: int(1, 3), times: int(1, 5) });
  // One batch keeps failing until it lands in the DLQ; it is redriven mid-run.
  const poisoned = chance(0.5)
    ? stream.batches[int(0, stream.batches.length - 1)]?.batchId
    : undefined;
  if (poisoned)
    faults.add({
      site: 'PutItem:batch',
      kind: 'crash-before',
      times: maxReceives,
      when: touchesLedgerOf(poisoned),
    });

  const ingestConfig = loadIngestConfig(ingestEnv);
  const newIngest = () =>
    createIngestHandler({
      ports: ingestPorts(ingestConfig, clients),
      settings: ingestSettings(ingestConfig),
    });
  const newAggregator = () =>
    createAggregateHandler({
      ports: aggregatorPorts(loadAggregateConfig(aggregateEnv), clients),
      quarantine: new S3Store(clients.s3, bucket),
    });

  const send = async (bodies: readonly string[]) => {
    const { refused } = await sendBodies(admin.sqs, orders.url, bodies);
    if (refused.length > 0) throw new Error(`chaos bodies refused: ${JSON.stringify(refused)}`);
  };

  /**
   * The event source mapping (the local runtime's poller), with two concurrent slots, each
   * invoking its own environment; receives of 1–10 messages; and sometimes a batch running twice
   * at once in a twin environment, as a handler outliving the visibility timeout causes.
   */
  const drive = async (
    q: { url: string; arn: string },
    newEnvironment: () => (
      e: SQSEvent,
      c: ReturnType<typeof lambdaContext>,
    ) => Promise<SQSBatchResponse>,
  ) => {
    const slots = [0, 1].map(() => ({ handler: newEnvironment(), twin: newEnvironment() }));
    await drainQueue({
      sqs: admin.sqs,
      queueUrl: q.url,
      queueArn: q.arn,
      region: LOCAL_REGION,
      maxConcurrency: slots.length,
      receiveSize: () => int(1, 10),
      invoke: async (slot, event) => {
        const env = slots[slot] ?? slots[0];
        if (!env) throw new Error(`no environment for slot ${slot}`);
        const run = (h: typeof env.handler) => h(event, lambdaContext('chaos', 30_000));
        const [first] = await Promise.allSettled(
          chance(0.1) ? [run(env.handler), run(env.twin)] : [run(env.handler)],
        );
        if (first?.status === 'rejected') throw first.reason;
        return first?.value;
      },
    });
  };
  const redrive = async (dlq: { url: string; arn: string }, source: { arn: string }) => {
    const d = await queueDepth(admin.sqs, dlq.url);
    if (d.visible === 0) return;
    await admin.sqs.send(
      new StartMessageMoveTaskCommand({ SourceArn: dlq.arn, DestinationArn: source.arn }),
    );
    await waitFor(
      async () =>
        (await admin.sqs.send(new ListMessageMoveTasksCommand({ SourceArn: dlq.arn }))).Results?.[0]
          ?.Status === 'COMPLETED',
      { timeoutMs: 30_000, what: 'the DLQ redrive' },
    );
  };
  const runAll = async () => {
    await drive(orders, newIngest);
    await drive(aggregate, newAggregator);
  };

  const half = Math.ceil(sends.length / 2);
  await send(sends.slice(0, half));
  await runAll();
  // Mid-run: redrive whatever reached the DLQ, replay the archive of an interval, reconcile an interval.
  await redrive(ordersDlq, orders);
  await send(sends.slice(half));
  const store = new S3Store(admin.s3, bucket);
  const archived = await store.listKeys(RAW_PREFIX);
  const replayed = archived.filter(() => chance(0.3));
  const replayBodies: string[] = [];
  for (const key of replayed) {
    const out = await admin.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    replayBodies.push((await out.Body?.transformToString()) ?? '');
  }
  await send(replayBodies);
  const ports = aggregatorPorts(loadAggregateConfig(aggregateEnv), clients);
  const hoursNow = (await store.listAggregates()).map((a) => a.hour);
  for (const hour of hoursNow.filter(() => chance(0.3)))
    await publishHour(hour, ports).catch(() => undefined);
  await runAll();
  // Whatever failed too often, redriven until everything settles.
  for (let round = 0; round < 5; round++) {
    const [o, a] = [
      await queueDepth(admin.sqs, ordersDlq.url),
      await queueDepth(admin.sqs, aggregateDlq.url),
    ];
    if (o.visible + a.visible === 0) break;
    await redrive(ordersDlq, orders);
    await redrive(aggregateDlq, aggregate);
    await runAll();
  }

  // The model: every distinct valid batch once; for the reused id, whichever content the ledger kept.
  const batches: { batchId: string; events: GeneratedEvent[] }[] = [...stream.batches];
  const diffs: string[] = [];
  if (victim && impostor) {
    const entry = await new DynamoLedger(admin.dynamo, table).entry(victim.batchId);
    const parsed = validateBatch(JSON.parse(impostor));
    const impostorDigest = parsed.ok ? batchDigest(parsed.batch) : '';
    if (entry?.digest === impostorDigest) {
      const i = batches.findIndex((b) => b.batchId === victim.batchId);
      batches[i] = JSON.parse(impostor) as { batchId: string; events: GeneratedEvent[] };
    }
  }
  const model = referenceModel(batches);
  const actualOrders = await new DynamoOrderStore(admin.dynamo, table).listOrders();
  const actualHours = (await store.listAggregates()).map(({ hour, events, byStatus }) => ({
    hour,
    events,
    byStatus,
  }));

  // Lost and double-counted events, cell by cell.
  const cells = (hours: typeof actualHours) => {
    const map = new Map<string, number>();
    for (const h of hours)
      for (const [status, s] of Object.entries(h.byStatus))
        map.set(`${h.hour} ${status}`, s.events);
    return map;
  };
  const expectedCells = cells(model.hourly);
  const actualCells = cells(actualHours);
  let lost = 0;
  let doubleCounted = 0;
  for (const key of new Set([...expectedCells.keys(), ...actualCells.keys()])) {
    const gap = (actualCells.get(key) ?? 0) - (expectedCells.get(key) ?? 0);
    if (gap < 0) lost -= gap;
    else doubleCounted += gap;
  }
  // Stale overwrites: orders not holding their newest event, and hour objects behind their counters.
  const expectedOrders = new Map(model.orders.map((x) => [x.orderId, JSON.stringify(x)]));
  let staleOverwrites = actualOrders.filter(
    (x) => expectedOrders.get(x.orderId) !== JSON.stringify(x),
  ).length;
  for (const hour of new Set([
    ...actualHours.map((h) => h.hour),
    ...model.hourly.map((h) => h.hour),
  ])) {
    if (
      (
        await planHour(hour, {
          ...ports,
          counters: aggregatorPorts(loadAggregateConfig(aggregateEnv), admin).counters,
        })
      ).action !== 'unchanged'
    )
      staleOverwrites++;
  }
  if (JSON.stringify(actualOrders) !== JSON.stringify(model.orders))
    diffs.push(
      `orders: ${actualOrders.length} found, ${model.orders.length} expected, ${staleOverwrites} differ`,
    );
  if (JSON.stringify(actualHours) !== JSON.stringify(model.hourly))
    diffs.push(`hourly: ${lost} events lost, ${doubleCounted} double-counted`);
  // Every invalid body, and the losing content of the reused id, is quarantined.
  const rejects = await store.listKeys('rejects/');
  const expectedRejects = stream.stats.invalid + 1 + (impostor ? 1 : 0);
  const rejectBodies = new Set<string>();
  for (const key of rejects) {
    const out = await admin.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    rejectBodies.add(
      (JSON.parse((await out.Body?.transformToString()) ?? '{}') as { body: string }).body,
    );
  }
  if (rejectBodies.size !== expectedRejects)
    diffs.push(
      `rejects: ${rejectBodies.size} distinct bodies quarantined, ${expectedRejects} expected`,
    );

  return {
    seed,
    events: stream.stats.events,
    lost,
    doubleCounted,
    staleOverwrites,
    mismatches: diffs.length,
    crashPoints: faults.fired.filter((f) => f.startsWith('crash-')),
    s3Conflicts: faults.fired.filter((f) => f.startsWith('s3-conflict')).length,
    wide,
    ...(diffs.length ? { diff: diffs.join('; ') } : {}),
  };
};

export interface ChaosOptions {
  readonly endpoint: string;
  readonly assemblyDir: string;
  readonly schedules: number;
  readonly seed: number;
  readonly orders: number;
  readonly onSchedule?: (result: ScheduleResult, index: number) => void;
}

export const runChaos = async (o: ChaosOptions): Promise<ChaosSummary> => {
  const covered = new Set<string>();
  const summary = {
    schedules: 0,
    events: 0,
    lost: 0,
    doubleCounted: 0,
    staleOverwrites: 0,
    mismatches: 0,
    s3Conflicts: 0,
    wideSchedules: 0,
  };
  const failures: { seed: number; diff: string }[] = [];
  for (let i = 0; i < o.schedules; i++) {
    const seed = scheduleSeed(o.seed, i);
    // Every crash point is forced in turn, so any run of 14+ schedules covers them all.
    const point = CRASH_POINTS[i % CRASH_POINTS.length];
    const result = await runSchedule({
      endpoint: o.endpoint,
      assemblyDir: o.assemblyDir,
      seed,
      orders: o.orders,
      ...(point === undefined ? {} : { mandatoryPoint: point }),
    });
    summary.schedules++;
    summary.events += result.events;
    summary.lost += result.lost;
    summary.doubleCounted += result.doubleCounted;
    summary.staleOverwrites += result.staleOverwrites;
    summary.mismatches += result.mismatches;
    summary.s3Conflicts += result.s3Conflicts;
    summary.wideSchedules += result.wide ? 1 : 0;
    for (const point of result.crashPoints) covered.add(point);
    if (result.diff) failures.push({ seed, diff: result.diff });
    o.onSchedule?.(result, i);
  }
  return {
    ...summary,
    crashPoints: {
      covered: CRASH_POINTS.filter((p) => covered.has(p)).length,
      total: CRASH_POINTS.length,
    },
    failures,
  };
};

export const formatSummary = (s: ChaosSummary) =>
  `${s.schedules.toLocaleString('en-US')} schedules, ${s.events.toLocaleString('en-US')} events, ${s.lost} lost, ${s.doubleCounted} double-counted, ` +
  `${s.staleOverwrites} stale overwrites, ${s.mismatches} mismatches; crash points covered ${s.crashPoints.covered}/${s.crashPoints.total}; ` +
  `${s.s3Conflicts} S3 409s on the archive, ${s.wideSchedules} schedules with batches at the contract's bounds`;
