/**
 * `onceflow validate`: a file of bodies checked against the message contract before it is sent,
 * with no stack: which would be quarantined and why, which repeat an earlier body, and which
 * reuse an id with other content.
 */
import Table from 'cli-table3';
import type { Command } from 'commander';
import { counted, SHOWN_ID_CHARACTERS, shortened, terminalSafe } from '../../local/render.ts';
import { type PreflightVerdict, preflight } from '../../shared/preflight.ts';
import { bodyLines, readInput } from '../input.ts';
import { integer, json, run } from '../program.ts';

/** The queue's maximum message size, which ingest's own limit matches by default. */
const QUEUE_MAXIMUM_BYTES = 1024 * 1024;

export interface LineVerdict {
  /** The file's line (1-based, blank lines counted). */
  readonly line: number;
  readonly verdict: PreflightVerdict;
}

/** What a line's verdict says, with the earlier body it refers to named by its line. */
const describe = (v: PreflightVerdict, lineOf: readonly number[]): string => {
  const at = (index: number) => `line ${lineOf[index] ?? index + 1}`;
  switch (v.kind) {
    case 'refused':
      return `quarantined (${v.reason}): ${v.detail}`;
    case 'repeat':
      return `the same batch as ${at(v.first)}: applied once`;
    case 'batch-conflict':
      return `batch-conflict: the id of ${at(v.first)} with other content; whichever arrives second is quarantined`;
    case 'applies': {
      const repeats =
        v.repeatedEvents > 0
          ? [`${counted(v.repeatedEvents, 'event')} an earlier line carries: counted once`]
          : [];
      const conflicts = v.conflicts.map(
        (c) =>
          `event-conflict: event ${c.eventId} of order ${c.orderId} as on ${at(c.first)} with other content; whichever arrives second is quarantined`,
      );
      return [`applies ${counted(v.events, 'event')}`, ...repeats, ...conflicts].join('; ');
    }
  }
};

/** Whether a line is worth a row: anything but a batch that simply applies. */
const notable = (v: PreflightVerdict) =>
  v.kind !== 'applies' || v.repeatedEvents > 0 || v.conflicts.length > 0;

/** A line the pipeline would quarantine, whole or in part. */
const quarantines = (v: PreflightVerdict) =>
  v.kind === 'refused' ||
  v.kind === 'batch-conflict' ||
  (v.kind === 'applies' && v.conflicts.length > 0);

const summary = (verdicts: readonly PreflightVerdict[]): string => {
  const applying = verdicts.flatMap((v) => (v.kind === 'applies' ? [v] : []));
  const events = applying.reduce((n, v) => n + v.events, 0);
  const hours = new Set(applying.flatMap((v) => v.hours)).size;
  const of = (kind: PreflightVerdict['kind']) => verdicts.filter((v) => v.kind === kind).length;
  const reasons = new Map<string, number>();
  for (const v of verdicts)
    if (v.kind === 'refused') reasons.set(v.reason, (reasons.get(v.reason) ?? 0) + 1);
  const eventConflicts = applying.reduce((n, v) => n + v.conflicts.length, 0);
  const parts = [
    `${applying.length} apply (${counted(events, 'event')} over ${counted(hours, 'hour')})`,
    ...(of('repeat') > 0 ? [`${of('repeat')} repeat an earlier line`] : []),
    ...(of('refused') > 0
      ? [`${of('refused')} quarantined (${[...reasons].map(([r, n]) => `${r} ${n}`).join(', ')})`]
      : []),
    ...(of('batch-conflict') > 0 ? [`${counted(of('batch-conflict'), 'batch conflict')}`] : []),
    ...(eventConflicts > 0 ? [`${counted(eventConflicts, 'event conflict')}`] : []),
  ];
  return `${counted(verdicts.length, 'body', 'bodies')}: ${parts.join(', ')}`;
};

export const register = (program: Command): void => {
  program
    .command('validate')
    .description(
      'check each line of an NDJSON file against the message contract before sending it, with no stack: what would be quarantined and why, and what repeats or reuses an id',
    )
    .argument('<file>', 'NDJSON file, one body per line; - for stdin')
    .option(
      '--max-body-bytes <n>',
      `the largest body ingest takes (its MAX_BODY_BYTES; default ${QUEUE_MAXIMUM_BYTES}, the queue's maximum)`,
      integer('a size in bytes', 1024, 10 * 1024 * 1024),
      QUEUE_MAXIMUM_BYTES,
    )
    .option('--json', 'print every line’s verdict as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  npx onceflow validate fix.ndjson && npx onceflow send fix.ndjson\n' +
        '  npx onceflow generate --orders 100 --invalid-rate 0.1 | npx onceflow validate -',
    )
    .action(
      run(async (file: string, o: { maxBodyBytes: number; json?: boolean }) => {
        const { bodies, lineOf } = bodyLines(readInput(file));
        const verdicts = preflight(bodies, o.maxBodyBytes);
        const lines: LineVerdict[] = verdicts.map((verdict, i) => ({
          line: lineOf[i] ?? i + 1,
          verdict,
        }));
        if (o.json) json(lines);
        else {
          const rows = lines.filter((l) => notable(l.verdict));
          if (rows.length > 0) {
            const table = new Table({
              head: ['line', 'batch', 'verdict'],
              style: { head: [], border: [], compact: true },
              colWidths: [null, null, 80],
              wordWrap: true,
            });
            for (const { line, verdict } of rows)
              table.push([
                { hAlign: 'right', content: String(line) },
                terminalSafe(shortened(verdict.batchId ?? '', SHOWN_ID_CHARACTERS)),
                terminalSafe(describe(verdict, lineOf)),
              ]);
            console.log(table.toString());
          }
          console.log(summary(verdicts));
        }
        return verdicts.some(quarantines) ? 1 : 0;
      }),
    );
};
