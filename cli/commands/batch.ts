/**
 * `onceflow batch <id>`: what became of one batch, from its ledger entry, its archived body and
 * the claims on its events. The question after an incident or a replay: was it applied, and
 * which batch counts each of its events?
 */
import Table from 'cli-table3';
import type { Command } from 'commander';
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { DynamoOrderStore } from '../../adapters/dynamo-orders.ts';
import { S3Store } from '../../adapters/s3.ts';
import { counted, terminalSafe } from '../../local/render.ts';
import {
  type BatchState,
  batchState,
  EVENT_FATES,
  type EventFate,
  type EventReport,
  eventFates,
  fateCounts,
} from '../../shared/batch-report.ts';
import { mapLimit } from '../../shared/concurrency.ts';
import { InvalidMessageError } from '../../shared/errors.ts';
import { BatchIdSchema, parseBatchBody } from '../../shared/schema.ts';
import { bannedIdReason, json, run, target } from '../program.ts';
import { CliError, type Target } from '../target.ts';

export interface BatchReport {
  readonly batchId: string;
  readonly state: BatchState;
  readonly parts: number;
  readonly committedParts: number;
  /** When the ledger first claimed it (ISO); absent on entries older than the field. */
  readonly receivedAt?: string;
  readonly digest: string;
  readonly archiveKey: string;
  /** Whether the archived body was found (it is written before the batch claims anything). */
  readonly archived: boolean;
  /** The hours refused as too late (latePolicy quarantine), when any. */
  readonly lateHours?: readonly string[];
  /** Each event's fate, in the batch's order; absent when the archived body is missing. */
  readonly events?: readonly EventReport[];
  readonly fates?: Readonly<Record<EventFate, number>>;
}

/** The report on one batch; undefined when the ledger has no entry for it. */
export const inspectBatch = async (
  t: Target,
  batchId: string,
): Promise<BatchReport | undefined> => {
  const table = t.output('TableName');
  const entry = await new DynamoLedger(t.clients.dynamo, table).entry(batchId);
  if (!entry) return undefined;
  const body = await new S3Store(t.clients.s3, t.output('BucketName')).getText(entry.archiveKey);
  const lateHours = entry.lateHours && entry.lateHours.size > 0 ? [...entry.lateHours].sort() : [];
  const report = {
    batchId,
    state: batchState(entry),
    parts: entry.parts,
    committedParts: entry.doneParts.size,
    ...(entry.receivedAtMs === undefined
      ? {}
      : { receivedAt: new Date(entry.receivedAtMs).toISOString() }),
    digest: entry.digest,
    archiveKey: entry.archiveKey,
    archived: body !== undefined,
    ...(lateHours.length > 0 ? { lateHours } : {}),
  };
  if (body === undefined) return report;
  let events: ReturnType<typeof parseBatchBody>['events'];
  try {
    events = parseBatchBody(body, Number.POSITIVE_INFINITY).events;
  } catch (error) {
    if (error instanceof InvalidMessageError)
      throw new CliError(`the archived body ${entry.archiveKey} is not a batch: ${error.detail}`, {
        cause: error,
      });
    throw error;
  }
  const claims = await new DynamoOrderStore(t.clients.dynamo, table).claimReader(
    events.map((e) => e.orderId),
  );
  const reports = eventFates(batchId, events, claims, entry.lateHours);
  return { ...report, events: reports, fates: fateCounts(reports) };
};

/** Each fate's words in the summary line, singular and plural. */
const FATE_WORDS: Record<EventFate, readonly [string, string]> = {
  counted: ['counted', 'counted'],
  duplicate: ['duplicate', 'duplicates'],
  conflict: ['conflict', 'conflicts'],
  'too-late': ['too late', 'too late'],
  unclaimed: ['unclaimed', 'unclaimed'],
};

/** The report as the terminal shows it, the events' table aside. */
export const describeBatch = (r: BatchReport): string => {
  const lines = [
    `batch ${terminalSafe(r.batchId)}: ${r.state} (${r.committedParts} of ${counted(r.parts, 'part')} committed)`,
    `received    ${r.receivedAt ?? 'not recorded (an entry written before onceflow recorded it)'}`,
    `digest      ${r.digest}`,
    `archived    ${terminalSafe(r.archiveKey)}${r.archived ? '' : ' (missing)'}`,
  ];
  if (r.lateHours) lines.push(`too late    ${r.lateHours.join(', ')} (refused and quarantined)`);
  if (r.events && r.fates) {
    const fates = r.fates;
    const parts = EVENT_FATES.map((f) => counted(fates[f], ...FATE_WORDS[f]));
    lines.push(`events      ${r.events.length}: ${parts.join(', ')}`);
  } else {
    lines.push('events      unknown: the archived body is missing, so the events cannot be named');
  }
  // A pending batch's message is being retried or sits in the DLQ; its archive can resume it.
  if (r.state === 'pending' && r.archived)
    lines.push(
      `resume      onceflow replay archive --batch-id ${terminalSafe(r.batchId)} (or onceflow replay dlq, if its message is in the DLQ)`,
    );
  // Conflicts and too-late parts were quarantined under this batch's id.
  if (r.lateHours || (r.fates && r.fates.conflict > 0))
    lines.push(`rejects     onceflow rejects --batch-id ${terminalSafe(r.batchId)}`);
  return lines.join('\n');
};

const eventsTable = (events: readonly EventReport[]): string => {
  const table = new Table({
    head: ['order', 'event', 'event time', 'fate', 'claimed by'],
    style: { head: [], border: [], compact: true },
  });
  for (const e of events)
    table.push([
      terminalSafe(e.orderId),
      terminalSafe(e.eventId),
      terminalSafe(e.eventTime),
      e.fate,
      terminalSafe(e.claimedBy ?? ''),
    ]);
  return table.toString();
};

/** Batches looked up at once (each one GetItem, one GetObject and a BatchGetItem or more). */
const LOOKUPS_IN_FLIGHT = 8;

const absentReason = (batchId: string) =>
  `batch ${batchId} is not in the ledger: never received, refused whole on arrival (onceflow rejects --batch-id ${batchId}), or its entry expired after the retention`;

export const register = (program: Command): void => {
  program
    .command('batch')
    .description(
      'what became of batches: applied or pending, when each arrived, and which batch counts each of its events',
    )
    .argument('<batchIds...>', 'one or more batch ids, as their producers sent them')
    .option('--events', 'list every event with its fate and the batch that claimed it')
    .option(
      '--json',
      'print a JSON array, one per id: {batchId, state, parts, committedParts, receivedAt, digest, archiveKey, archived, lateHours, events, fates}, or {batchId, state: "absent"}',
    )
    .addHelpText(
      'after',
      [
        '',
        'Fates: counted (by this batch), duplicate (the same event, counted by the batch named),',
        'conflict (other content under the same ids, claimed first by the batch named: never',
        'applied from this one, see `onceflow rejects --batch-id <id>`), too late (its hour',
        'was closed on arrival under latePolicy quarantine), unclaimed (not applied yet, or its',
        'claim expired with the retention).',
        '',
        'An id reused with other content is reported as first applied: the later content was',
        'quarantined (`onceflow rejects --reason batch-conflict`). Exit 1 if any id is not in',
        'the ledger.',
        '',
        'Examples:',
        '  npx onceflow batch gen-s1-659e66-000001',
        '  npx onceflow batch b-2026-10-01-0042 --events',
        '  npx onceflow batch $(cat replayed-ids.txt) --json',
      ].join('\n'),
    )
    .action(
      run(async (batchIds: string[], o: { events?: boolean; json?: boolean }) => {
        const ids = [...new Set(batchIds)];
        const banned = ids.flatMap((id) => bannedIdReason(BatchIdSchema, 'batch id', id) ?? []);
        for (const reason of banned) console.error(`onceflow: ${terminalSafe(reason)}`);
        if (banned.length > 0) return 1;
        const t = await target();
        const reports = await mapLimit(ids, LOOKUPS_IN_FLIGHT, (id) => inspectBatch(t, id));
        const absent = ids.filter((_, i) => reports[i] === undefined);
        if (o.json) {
          json(ids.map((batchId, i) => reports[i] ?? { batchId, state: 'absent' }));
        } else {
          const found = reports.flatMap((r) => (r ? [r] : []));
          if (found.length > 0)
            console.log(
              found
                .map((r) =>
                  o.events && r.events
                    ? `${describeBatch(r)}\n${eventsTable(r.events)}`
                    : describeBatch(r),
                )
                .join('\n\n'),
            );
        }
        if (absent.length === 0) return 0;
        if (ids.length === 1) throw new CliError(absentReason(absent[0] ?? ''));
        for (const id of absent) console.error(`onceflow: ${terminalSafe(absentReason(id))}`);
        return 1;
      }),
    );
};
