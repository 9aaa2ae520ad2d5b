/** `onceflow replay`: its `archive` subcommand here, `dlq` and `rejects` in modules of their own. */
import type { Command } from 'commander';
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { eventHoursOf, type RecoverySelection, recoveryKeys } from '../../adapters/recovery.ts';
import { S3Store } from '../../adapters/s3.ts';
import { counted, terminalSafe } from '../../local/render.ts';
import { mapLimit } from '../../shared/concurrency.ts';
import { RAW_PREFIX } from '../../shared/keys.ts';
import { BatchIdSchema } from '../../shared/schema.ts';
import { formatHour, hoursBetween } from '../../shared/time.ts';
import {
  bannedIdReason,
  inFlightOption,
  paceOf,
  progress,
  rateOption,
  run,
  target,
} from '../program.ts';
import { CliError, type Target } from '../target.ts';
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
  const ledger = new DynamoLedger(target.clients.dynamo, target.output('TableName'));
  const named = await mapLimit(selection.batchIds ?? [], REQUESTS_IN_FLIGHT, async (batchId) => ({
    batchId,
    entry: await ledger.entry(batchId),
  }));
  const keys = [
    ...new Set([
      ...named.flatMap((n) => (n.entry ? [n.entry.archiveKey] : [])),
      ...(selection.interval ? await archivedKeys(target, selection.interval) : []),
      ...(await recoveryKeys(store, ledger, selection)),
    ]),
  ];
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
    /** Batch ids named but not in the ledger: there is no archive key to find them by. */
    unknown: named.flatMap((n) => (n.entry ? [] : [n.batchId])),
  };
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
    .addOption(rateOption())
    .addOption(inFlightOption())
    .addHelpText(
      'after',
      '\nExamples:\n  npx onceflow replay archive --from 2026-10-01 --to 2026-10-02 --rate 100\n' +
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
          const bar = progress('replaying');
          const result = await replayArchive(
            await target(),
            {
              ...(interval ? { interval } : {}),
              ...(receivedFromMs === undefined ? {} : { receivedFromMs }),
              ...(receivedToMs === undefined ? {} : { receivedToMs }),
              ...(o.pending ? { pending: true } : {}),
              ...(batchIds.length > 0 ? { batchIds } : {}),
            },
            { onProgress: bar.update, ...paceOf(o) },
          );
          bar.stop();
          console.log(`re-sent ${counted(result.batches, 'archived batch', 'archived batches')}`);
          if (result.hours) {
            const [from, to] = [result.hours.fromMs, result.hours.toMs].map(formatHour);
            console.log(
              `their events fall in ${from} – ${to}; once drained: npx onceflow reconcile --from ${from} --to ${to}`,
            );
          }
          for (const key of result.missing)
            console.error(`${key} is named but not archived (its message is still queued)`);
          for (const r of result.refused) console.error(`${r.key} was not sent: ${r.reason}`);
          for (const id of result.unknown)
            console.error(
              `batch ${terminalSafe(id)} is not in the ledger, so its archive cannot be found by id: never received, refused whole on arrival, or received after the point a table was restored to (replay archive --received-from finds those by arrival)`,
            );
          return result.refused.length + result.unknown.length > 0 ? 1 : 0;
        },
      ),
    );
  registerRejectsReplay(replay);
};
