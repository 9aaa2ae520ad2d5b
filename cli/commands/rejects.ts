/** `onceflow rejects`: the quarantine. */
import Table from 'cli-table3';
import type { Command } from 'commander';
import { S3Store } from '../../adapters/s3.ts';
import {
  countRejectsByReason,
  type RejectFilter,
  readRejects,
  type StoredReject,
} from '../../adapters/s3-quarantine.ts';
import { terminalSafe } from '../../local/render.ts';
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

export const register = (program: Command): void => {
  program
    .command('rejects')
    .description('the quarantined messages and why')
    .option('--json', 'print JSON, raw bodies included')
    .option('--reason <reason>', 'only this reason (e.g. schema-violation, batch-conflict)')
    .option('--since <time>', 'only messages sent at or after this RFC 3339 time or date')
    .option(
      '--batch-id <id>',
      'only those naming this batch: its conflicts, too-late parts, or a body refused whole',
    )
    .addHelpText(
      'after',
      '\nExample:\n  npx onceflow rejects\n  npx onceflow rejects --reason batch-conflict --since 2026-10-01\n  npx onceflow rejects --reason event-conflict --json\n  npx onceflow rejects --batch-id b-2026-10-01-0042',
    )
    .action(
      run(async (o: { json?: boolean; reason?: string; since?: string; batchId?: string }) => {
        const rejects = await listRejects(await target(), {
          ...(o.reason === undefined ? {} : { reason: o.reason }),
          ...(o.since === undefined ? {} : { sinceMs: parseInstant('--since', o.since) }),
          ...(o.batchId === undefined ? {} : { batchId: o.batchId }),
        });
        if (o.json) {
          json(rejects);
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
