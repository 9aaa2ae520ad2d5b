/** `onceflow replay`: its `archive` subcommand here, `dlq` and `rejects` in modules of their own. */
import type { Command } from 'commander';
import * as v from 'valibot';
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { eventHoursOf, type RecoverySelection, recoveryKeys } from '../../adapters/recovery.ts';
import { S3Store } from '../../adapters/s3.ts';
import { counted, terminalSafe } from '../../local/render.ts';
import { batchState } from '../../shared/batch-report.ts';
import { mapLimit } from '../../shared/concurrency.ts';
import { batchIdOfArchiveKey, hourOfArchiveKey, RAW_PREFIX } from '../../shared/keys.ts';
import { BatchIdSchema } from '../../shared/schema.ts';
import { formatHour, hoursBetween } from '../../shared/time.ts';
import {
  bannedIdReason,
  inFlightOption,
  json,
  paceOf,
  progress,
  rateOption,
  run,
  target,
} from '../program.ts';
import { CliError, type Target } from '../target.ts';
import { archivePlanSummary, archivePlanTable } from './archive-plan.ts';
import type { LedgerView } from './dlq-peek.ts';
import { type Interval, parseInstant, parseInterval } from './interval.ts';
import { register as registerDlqReplay } from './replay-dlq.ts';
import { register as registerRejectsReplay } from './replay-rejects.ts';
import { sendLines } from './send.ts';

/**
 * S3 requests in flight while replaying: each listing and each archived batch is a round trip
 * of its own, and an incident's replay can name thousands (one at a time, 10,000 batches were
 * 10,000 round trips in a row before the first could be sent).
 */
const REQUESTS_IN_FLIGHT = 16;

/** The archived raw batches whose earliest event falls in the interval, hour by hour. */
export const archivedKeys = async (target: Target, interval: Interval): Promise<string[]> => {
  const store = new S3Store(target.clients.s3, target.output('BucketName'));
  const perHour = await mapLimit(
    hoursBetween(interval.fromMs, interval.toMs),
    REQUESTS_IN_FLIGHT,
    (hour) => store.listKeys(`${RAW_PREFIX}date=${hour.slice(0, 10)}/hour=${hour.slice(11, 13)}/`),
  );
  return perHour.flat();
};

export interface ArchiveSelection extends RecoverySelection {
  /** Batches whose earliest event falls in this interval. */
  readonly interval?: Interval;
  /** These batches, found by the archive key of their ledger entries; sent first, in this order. */
  readonly batchIds?: readonly string[];
}

export interface ReplayOptions {
  readonly onProgress?: (done: number, total: number) => void;
  /** SendMessageBatch requests in flight; default 1, in the selection's order (see sendBodies). */
  readonly inFlight?: number;
  /** Messages a second at most; default as fast as SQS takes them. */
  readonly rate?: number;
  /**
   * Archived batches read, then sent, at a time: what the replay holds in memory (at most this
   * many bodies of up to the queue's 1 MiB). Default 160.
   */
  readonly chunkSize?: number;
}

/** The archive keys a selection names, each once, in the order they are sent. */
const selectArchived = async (target: Target, selection: ArchiveSelection) => {
  const store = new S3Store(target.clients.s3, target.output('BucketName'));
  const ledger = new DynamoLedger(target.clients.dynamo, target.output('TableName'));
  const named = await mapLimit(selection.batchIds ?? [], REQUESTS_IN_FLIGHT, async (batchId) => ({
    batchId,
    entry: await ledger.entry(batchId),
  }));
  const listed = selection.interval ? await archivedKeys(target, selection.interval) : [];
  const keys = [
    ...new Set([
      ...named.flatMap((n) => (n.entry ? [n.entry.archiveKey] : [])),
      ...listed,
      ...(await recoveryKeys(store, ledger, selection)),
    ]),
  ];
  return {
    keys,
    /** The keys a listing of the archive found (the others were named by the ledger or index). */
    listed: new Set(listed),
    /** The ledger entries read for the ids named, by their archive keys. */
    named: new Map(named.flatMap((n) => (n.entry ? [[n.entry.archiveKey, n.entry] as const] : []))),
    /** Batch ids named but not in the ledger: there is no archive key to find them by. */
    unknown: named.flatMap((n) => (n.entry ? [] : [n.batchId])),
  };
};

/** What the ledger holds of an archived batch: `absent` when it has no entry for it. */
export type ArchivedState = Exclude<LedgerView, 'invalid'>;

export interface ArchivePlanEntry {
  readonly key: string;
  /** The batch id the key names; undefined for an object the archive's layout does not name. */
  readonly batchId?: string;
  /** The hour of the batch's earliest event, which the key is filed under. */
  readonly hour?: string;
  readonly ledger: ArchivedState;
  /** When the ledger first saw the batch (RFC 3339), for a batch it holds. */
  readonly receivedAt?: string;
  /** False when the ledger or the arrival index names the key but the archive holds no object. */
  readonly archived: boolean;
}

/**
 * What `replay archive` would send, in its order, each batch with what the ledger holds of it,
 * without reading or sending a body: one listing per hour and one ledger read per batch.
 */
export const planArchiveReplay = async (
  target: Target,
  selection: ArchiveSelection,
): Promise<{ readonly entries: ArchivePlanEntry[]; readonly unknown: string[] }> => {
  const ledger = new DynamoLedger(target.clients.dynamo, target.output('TableName'));
  const store = new S3Store(target.clients.s3, target.output('BucketName'));
  const { keys, listed, named, unknown } = await selectArchived(target, selection);
  const entries = await mapLimit(keys, REQUESTS_IN_FLIGHT, async (key) => {
    const batchId = batchIdOfArchiveKey(key);
    const hour = hourOfArchiveKey(key);
    // An id the contract bans keys no entry (and may be no valid key at all): never looked up;
    // nor one the selection already read.
    const [entry, archived] = await Promise.all([
      named.get(key) ??
        (batchId !== undefined && v.is(BatchIdSchema, batchId)
          ? ledger.entry(batchId)
          : Promise.resolve(undefined)),
      listed.has(key) ? Promise.resolve(true) : store.exists(key),
    ]);
    return {
      key,
      archived,
      ...(batchId === undefined ? {} : { batchId }),
      ...(hour === undefined ? {} : { hour }),
      ledger: entry ? batchState(entry) : 'absent',
      ...(entry?.receivedAtMs === undefined
        ? {}
        : { receivedAt: new Date(entry.receivedAtMs).toISOString() }),
    } satisfies ArchivePlanEntry;
  });
  return { entries, unknown };
};

type HourSpan = ReturnType<typeof eventHoursOf>;

const spanOfBoth = (a: HourSpan, b: HourSpan): HourSpan =>
  a && b ? { fromMs: Math.min(a.fromMs, b.fromMs), toMs: Math.max(a.toMs, b.toMs) } : (a ?? b);

/**
 * Re-sends archived batches: by their events' interval, by when they were received, and those
 * the ledger shows pending. Safe: the ledger recognises every batch already applied.
 */
export const replayArchive = async (
  target: Target,
  selection: ArchiveSelection,
  options: ReplayOptions = {},
) => {
  const store = new S3Store(target.clients.s3, target.output('BucketName'));
  const { keys, unknown } = await selectArchived(target, selection);
  const chunkSize = options.chunkSize ?? 160;
  const { onProgress } = options;
  let batches = 0;
  let hours: HourSpan;
  const missing: string[] = [];
  const refused: { key: string; reason: string }[] = [];
  // Chunk by chunk, in the selection's order: the bodies read at once, then sent.
  for (let start = 0; start < keys.length; start += chunkSize) {
    const chunk = keys.slice(start, start + chunkSize);
    const texts = await mapLimit(chunk, REQUESTS_IN_FLIGHT, (key) => store.getText(key));
    const found: { key: string; body: string }[] = [];
    for (const [i, key] of chunk.entries()) {
      const body = texts[i];
      if (body === undefined) missing.push(key);
      else found.push({ key, body });
    }
    const bodies = found.map((f) => f.body);
    const sent = await sendLines(target, bodies, {
      ...paceOf(options),
      ...(onProgress ? { onProgress: (done) => onProgress(start + done, keys.length) } : {}),
    });
    batches += sent.sent;
    for (const r of sent.refused)
      refused.push({ key: found[r.line - 1]?.key ?? '', reason: r.reason });
    hours = spanOfBoth(hours, eventHoursOf(bodies));
    onProgress?.(start + chunk.length, keys.length);
  }
  return {
    batches,
    /** Archive keys named by the index or the ledger but absent (a pending batch never archived). */
    missing,
    /** The event hours the re-sent batches touch: what to reconcile once drained. */
    hours,
    refused,
    unknown,
  };
};

const notArchived = (key: string) =>
  `${terminalSafe(key)} is named but not archived (its message is still queued)`;

const notInLedger = (id: string) =>
  `batch ${terminalSafe(id)} is not in the ledger, so its archive cannot be found by id: never received, refused whole on arrival, or received after the point a table was restored to (replay archive --received-from finds those by arrival)`;

/** `--dry-run`: the plan as a table (or JSON); exits 1 on ids the ledger does not know, as a run. */
const printPlan = (
  plan: Awaited<ReturnType<typeof planArchiveReplay>>,
  o: { readonly json?: boolean },
): number => {
  if (o.json) json(plan.entries);
  else if (plan.entries.length === 0) console.log('no archived batch in the selection');
  else {
    console.log(archivePlanTable(plan.entries));
    console.log(archivePlanSummary(plan.entries));
  }
  for (const e of plan.entries) if (!e.archived) console.error(notArchived(e.key));
  for (const id of plan.unknown) console.error(notInLedger(id));
  return plan.unknown.length > 0 ? 1 : 0;
};

export const register = (program: Command): void => {
  const replay = program
    .command('replay')
    .description(
      'send messages again: a DLQ back to its queue, archived batches, or quarantined ones a changed setting lets through',
    );
  registerDlqReplay(replay);
  replay
    .command('archive')
    .description(
      're-send archived raw batches: by event time, by arrival time, or those pending in the ledger (already applied ones are skipped by the ledger)',
    )
    .option('--from <time>', 'first hour of the batches’ earliest events (inclusive)')
    .option('--to <time>', 'end hour (exclusive)')
    .option(
      '--received-from <time>',
      'batches received at or after this RFC 3339 time (from the start of its hour)',
    )
    .option('--received-to <time>', 'batches received before this time (default now)')
    .option('--pending', 'also the batches the ledger shows pending (after a table restore)')
    .option(
      '--batch-id <ids...>',
      'also these batches, by the archive key their ledger entries name (sent first, in this order)',
    )
    .option(
      '--dry-run',
      'send nothing: list the archived batches the replay would send and what the ledger holds of each',
    )
    .option('--json', 'with --dry-run: print JSON')
    .addOption(rateOption().conflicts('dryRun'))
    .addOption(inFlightOption().conflicts('dryRun'))
    .addHelpText(
      'after',
      '\nExamples:\n  npx onceflow replay archive --from 2026-10-01 --to 2026-10-02 --dry-run\n' +
        '  npx onceflow replay archive --from 2026-10-01 --to 2026-10-02 --rate 100\n' +
        '  npx onceflow replay archive --received-from 2026-12-01T03:00:00Z --pending\n' +
        '  npx onceflow replay archive --batch-id b-2026-10-01-0042 b-2026-10-01-0043',
    )
    .action(
      run(
        async (o: {
          from?: string;
          to?: string;
          receivedFrom?: string;
          receivedTo?: string;
          pending?: boolean;
          batchId?: string[];
          inFlight?: number;
          rate?: number;
          dryRun?: boolean;
          json?: boolean;
        }) => {
          const interval = parseInterval(o.from, o.to, false);
          const receivedFromMs =
            o.receivedFrom === undefined
              ? undefined
              : parseInstant('--received-from', o.receivedFrom);
          const receivedToMs =
            o.receivedTo === undefined ? undefined : parseInstant('--received-to', o.receivedTo);
          const batchIds = [...new Set(o.batchId ?? [])];
          const banned = batchIds.flatMap(
            (id) => bannedIdReason(BatchIdSchema, 'batch id', id) ?? [],
          );
          if (banned.length > 0) throw new CliError(banned.join('; '));
          if (!interval && receivedFromMs === undefined && !o.pending && batchIds.length === 0) {
            throw new CliError('give --from and --to, --received-from, --pending or --batch-id');
          }
          const selection: ArchiveSelection = {
            ...(interval ? { interval } : {}),
            ...(receivedFromMs === undefined ? {} : { receivedFromMs }),
            ...(receivedToMs === undefined ? {} : { receivedToMs }),
            ...(o.pending ? { pending: true } : {}),
            ...(batchIds.length > 0 ? { batchIds } : {}),
          };
          if (o.dryRun) return printPlan(await planArchiveReplay(await target(), selection), o);
          const bar = progress('replaying');
          const result = await replayArchive(await target(), selection, {
            onProgress: bar.update,
            ...paceOf(o),
          });
          bar.stop();
          console.log(`re-sent ${counted(result.batches, 'archived batch', 'archived batches')}`);
          if (result.hours) {
            const [from, to] = [result.hours.fromMs, result.hours.toMs].map(formatHour);
            console.log(
              `their events fall in ${from} – ${to}; once drained: npx onceflow reconcile --from ${from} --to ${to}`,
            );
          }
          for (const key of result.missing) console.error(notArchived(key));
          for (const r of result.refused) console.error(`${r.key} was not sent: ${r.reason}`);
          for (const id of result.unknown) console.error(notInLedger(id));
          return result.refused.length + result.unknown.length > 0 ? 1 : 0;
        },
      ),
    );
  registerRejectsReplay(replay);
};
