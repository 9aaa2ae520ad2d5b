/**
 * `onceflow replay archive --dry-run`: what a replay would send, each archived batch with what the
 * ledger holds of it, printed before anything is sent.
 */
import Table from 'cli-table3';
import { counted, SHOWN_ID_CHARACTERS, shortened, terminalSafe } from '../../local/render.ts';
import { LEDGER_WORDS } from './dlq-peek.ts';
import type { ArchivedState, ArchivePlanEntry } from './replay.ts';

export const archivePlanTable = (entries: readonly ArchivePlanEntry[]): string => {
  const table = new Table({
    head: ['batch', 'earliest event hour', 'received', 'ledger'],
    style: { head: [], border: [], compact: true },
  });
  for (const e of entries)
    table.push([
      terminalSafe(shortened(e.batchId ?? e.key, SHOWN_ID_CHARACTERS)),
      e.hour ?? '',
      e.receivedAt ?? '',
      `${LEDGER_WORDS[e.ledger]}${e.archived ? '' : ', not archived'}`,
    ]);
  return table.toString();
};

/** One line: how many would be sent, and what each kind does once it arrives. */
export const archivePlanSummary = (entries: readonly ArchivePlanEntry[]): string => {
  const sent = entries.filter((e) => e.archived);
  const of = (state: ArchivedState) => sent.filter((e) => e.ledger === state).length;
  const parts = [
    [of('applied'), 'applied (recognised by the ledger: they change nothing)'],
    [of('pending'), 'pending (completed from their archive)'],
    [of('absent'), 'not in the ledger (applied as new, unless older than the ledger retention)'],
  ] as const;
  const kinds = parts.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
  return `would re-send ${counted(sent.length, 'archived batch', 'archived batches')}${kinds.length > 0 ? `: ${kinds.join(', ')}` : ''}; nothing was sent`;
};
