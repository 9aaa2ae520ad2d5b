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
import { InvalidMessageError } from '../../shared/errors.ts';
import { parseBatchBody } from '../../shared/ingest.ts';
import { json, run, target } from '../program.ts';
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

const FATE_WORDS: Record<EventFate, [string, string]> = {
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
    const parts = EVENT_FATES.map((f) => `${fates[f]} ${FATE_WORDS[f][fates[f] === 1 ? 0 : 1]}`);
    lines.push(`events      ${r.events.length}: ${parts.join(', ')}`);
  } else {
    lines.push('events      unknown: the archived body is missing, so the events cannot be named');
  }
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

export const register = (program: Command): void => {
  program
    .command('batch')
    .description(
      'what became of one batch: applied or pending, when it arrived, and which batch counts each of its events',
    )
    .argument('<batchId>', 'the batch id, as its producer sent it')
    .option('--events', 'list every event with its fate and the batch that claimed it')
    .option(
      '--json',
      'print JSON: {batchId, state, parts, committedParts, receivedAt, digest, archiveKey, archived, lateHours, events, fates}',
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
        'quarantined (`onceflow rejects --reason batch-conflict`).',
        '',
        'Example:',
        '  npx onceflow batch gen-s1-659e66-000001',
        '  npx onceflow batch b-2026-10-01-0042 --events',
      ].join('\n'),
    )
    .action(
      run(async (batchId: string, o: { events?: boolean; json?: boolean }) => {
        const report = await inspectBatch(await target(), batchId);
        if (!report)
          throw new CliError(
            `batch ${batchId} is not in the ledger: never received, refused whole on arrival (onceflow rejects --batch-id ${batchId}), or its entry expired after the retention`,
          );
        if (o.json) json(report);
        else {
          console.log(describeBatch(report));
          if (o.events && report.events) console.log(eventsTable(report.events));
        }
        return 0;
      }),
    );
};
