/** `onceflow rejects`: the quarantine, and its bodies for correction. */
import Table from 'cli-table3';
import { type Command, Option } from 'commander';
import { S3Store } from '../../adapters/s3.ts';
import {
  countRejectsByReason,
  type RejectFilter,
  readRejects,
  type StoredReject,
} from '../../adapters/s3-quarantine.ts';
import { counted, terminalSafe } from '../../local/render.ts';
import { UnexpectedObjectError } from '../../shared/errors.ts';
import { json, run, target } from '../program.ts';
import { CliError, type Target } from '../target.ts';
import { parseInstant } from './interval.ts';

/** Reads the quarantine; an object that is not a reject is named as the command's error. */
const fromQuarantine = async <T>(target: Target, read: (store: S3Store) => Promise<T>) => {
  try {
    return await read(new S3Store(target.clients.s3, target.output('BucketName')));
  } catch (error) {
    if (error instanceof UnexpectedObjectError) throw new CliError(error.message, { cause: error });
    throw error;
  }
};

export const listRejects = (target: Target, filter: RejectFilter = {}): Promise<StoredReject[]> =>
  fromQuarantine(target, (store) => readRejects(store, filter));

/** Rejects by reason, read from their keys. */
export const countRejects = (target: Target): Promise<Record<string, number>> =>
  fromQuarantine(target, countRejectsByReason);

/**
 * Rejects whose body is not a message to send again, and what to do instead: an event conflict
 * keeps the one event that lost, a too-late reject one hour's part of a batch whose id is taken.
 */
const NOT_A_MESSAGE: Readonly<Record<string, string>> = {
  'event-conflict':
    'its body is one event, first applied with other content; send a correction as a new event (a new eventId)',
  'too-late':
    'its body is one hour of a batch whose id stays taken; once latePolicy amend is deployed, onceflow replay rejects --reason too-late',
};

/** What a body of these reasons needs before it is sent again, or it is refused again. */
const BEFORE_SENDING: Readonly<Record<string, string>> = {
  'batch-conflict': 'give each a new batchId: the one it names is taken by other content',
  oversize:
    'split its events into batches within the queue’s message size, each under a new batchId',
  'beyond-retention':
    'it is refused again while its earliest event is older than the ledger retention',
};

/** Quarantined bodies as lines `send` reads, and the rejects that are not messages to send. */
export interface BodiesForCorrection {
  readonly lines: string[];
  readonly skipped: { readonly messageId: string; readonly reason: string; readonly why: string }[];
  /** Per reason in BEFORE_SENDING, how many of `lines` it holds and what they need. */
  readonly notes: string[];
}

const isJson = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch (error) {
    if (error instanceof SyntaxError) return false;
    throw error;
  }
};

/**
 * Each reject's body as one line of NDJSON, to be corrected and sent again with `send`. A JSON
 * body that spans lines is put on one: in JSON a line break outside a string is whitespace, and
 * one inside a string is not JSON, so replacing each with a space keeps every value, digits and
 * escapes included, byte for byte (parsing and printing it again would round large numbers). A
 * body that spans lines and is not JSON cannot be one line without changing it: it is skipped,
 * and `rejects --json` shows it whole.
 */
export const bodiesForCorrection = (rejects: readonly StoredReject[]): BodiesForCorrection => {
  const lines: string[] = [];
  const skipped: BodiesForCorrection['skipped'][number][] = [];
  const byReason = new Map<string, number>();
  for (const r of rejects) {
    const instead = NOT_A_MESSAGE[r.reason];
    if (instead !== undefined) {
      skipped.push({ messageId: r.messageId, reason: r.reason, why: instead });
      continue;
    }
    const spansLines = /[\r\n]/.test(r.body);
    if (spansLines && !isJson(r.body)) {
      skipped.push({
        messageId: r.messageId,
        reason: r.reason,
        why: 'its body spans several lines and is not JSON; onceflow rejects --json shows it whole',
      });
      continue;
    }
    const line = spansLines ? r.body.replace(/\r\n|\r|\n/g, ' ') : r.body;
    lines.push(line);
    if (BEFORE_SENDING[r.reason] !== undefined)
      byReason.set(r.reason, (byReason.get(r.reason) ?? 0) + 1);
  }
  const notes = [...byReason].map(
    ([reason, n]) =>
      `${counted(n, `${reason} body`, `${reason} bodies`)}: ${BEFORE_SENDING[reason]}`,
  );
  return { lines, skipped, notes };
};

/**
 * A body as `--bodies` prints it: exact into a file or a pipe, for `send`; escaped on a terminal,
 * where a body's control characters (a producer's, or an attacker's) would act on it.
 */
export const printedBody = (line: string, terminal: boolean): string =>
  terminal ? terminalSafe(line) : line;

interface RejectsOptions {
  readonly json?: boolean;
  readonly bodies?: boolean;
  readonly reason?: string;
  readonly since?: string;
  readonly batchId?: string;
}

export const register = (program: Command): void => {
  program
    .command('rejects')
    .description('the quarantined messages and why')
    .option('--json', 'print JSON, raw bodies included')
    .addOption(
      new Option(
        '--bodies',
        'print only their bodies, one per line, as `send` reads them: to correct and send again',
      ).conflicts('json'),
    )
    .option('--reason <reason>', 'only this reason (e.g. schema-violation, batch-conflict)')
    .option('--since <time>', 'only messages sent at or after this RFC 3339 time or date')
    .option(
      '--batch-id <id>',
      'only those naming this batch: its conflicts, too-late parts, or a body refused whole',
    )
    .addHelpText(
      'after',
      '\nExample:\n  npx onceflow rejects\n  npx onceflow rejects --reason schema-violation --bodies > fix.ndjson\n  npx onceflow rejects --reason batch-conflict --since 2026-10-01\n  npx onceflow rejects --reason event-conflict --json\n  npx onceflow rejects --batch-id b-2026-10-01-0042',
    )
    .action(
      run(async (o: RejectsOptions) => {
        const rejects = await listRejects(await target(), {
          ...(o.reason === undefined ? {} : { reason: o.reason }),
          ...(o.since === undefined ? {} : { sinceMs: parseInstant('--since', o.since) }),
          ...(o.batchId === undefined ? {} : { batchId: o.batchId }),
        });
        if (o.json) {
          json(rejects);
          return 0;
        }
        if (o.bodies) {
          const { lines, skipped, notes } = bodiesForCorrection(rejects);
          const terminal = process.stdout.isTTY === true;
          process.stdout.write(lines.map((line) => `${printedBody(line, terminal)}\n`).join(''));
          for (const left of skipped)
            console.error(terminalSafe(`left out ${left.messageId} (${left.reason}): ${left.why}`));
          for (const note of notes) console.error(`before sending: ${note}`);
          console.error(`${counted(lines.length, 'body', 'bodies')} to correct and send again`);
          return 0;
        }
        const table = new Table({
          head: ['sent', 'from', 'reason', 'batch', 'message id', 'detail'],
          style: { head: [], border: [], compact: true },
          colWidths: [null, null, null, null, null, 60],
          wordWrap: true,
        });
        for (const r of rejects)
          table.push(
            [r.sentAt, r.source, r.reason, r.batchId ?? '', r.messageId, r.detail].map(
              terminalSafe,
            ),
          );
        console.log(`${table.toString()}\n${rejects.length} quarantined`);
        return 0;
      }),
    );
};
