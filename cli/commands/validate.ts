/**
 * `onceflow validate`: a file of bodies checked against the message contract before it is sent,
 * with no stack: which would be quarantined and why, which repeat an earlier body, and which
 * reuse an id with other content.
 */
import Table from 'cli-table3';
import type { Command } from 'commander';
import { counted, SHOWN_ID_CHARACTERS, shortened, terminalSafe } from '../../local/render.ts';
import { mapLimit } from '../../shared/concurrency.ts';
import { type PreflightVerdict, preflight } from '../../shared/preflight.ts';
import { bodyLines, readInput } from '../input.ts';
import { integer, json, run, target } from '../program.ts';

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
      return v.first === 'stack'
        ? 'already in the stack’s ledger with this content: sent again, it applies nothing twice'
        : `the same batch as ${at(v.first)}: applied once`;
    case 'batch-conflict':
      return v.first === 'stack'
        ? 'batch-conflict: the stack’s ledger holds this id with other content; quarantined'
        : `batch-conflict: the id of ${at(v.first)} with other content; whichever arrives second is quarantined`;
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
  const onStack = verdicts.filter((v) => v.kind === 'repeat' && v.first === 'stack').length;
  const repeats = of('repeat') - onStack;
  const parts = [
    `${applying.length} apply (${counted(events, 'event')} over ${counted(hours, 'hour')})`,
    ...(repeats > 0 ? [`${repeats} repeat an earlier line`] : []),
    ...(onStack > 0 ? [`${onStack} already in the stack’s ledger`] : []),
    ...(of('refused') > 0
      ? [`${of('refused')} quarantined (${[...reasons].map(([r, n]) => `${r} ${n}`).join(', ')})`]
      : []),
    ...(of('batch-conflict') > 0 ? [`${counted(of('batch-conflict'), 'batch conflict')}`] : []),
    ...(eventConflicts > 0 ? [`${counted(eventConflicts, 'event conflict')}`] : []),
  ];
  return `${counted(verdicts.length, 'body', 'bodies')}: ${parts.join(', ')}`;
};

interface Options {
  readonly maxBodyBytes: number;
  readonly json?: boolean;
  readonly againstStack?: boolean;
}

/** Ledger reads in flight. */
const LOOKUPS_IN_FLIGHT = 16;

/**
 * The digests the stack's ledger holds for the batch ids the file would apply. The AWS SDK is
 * loaded only here: without `--against-stack` the command needs no stack and loads no client.
 */
const ledgerDigests = async (verdicts: readonly PreflightVerdict[]) => {
  const { DynamoLedger } = await import('../../adapters/dynamo.ts');
  const t = await target();
  const ledger = new DynamoLedger(t.clients.dynamo, t.output('TableName'));
  const ids = verdicts.flatMap((v) => (v.kind === 'applies' ? [v.batchId] : []));
  const entries = await mapLimit(ids, LOOKUPS_IN_FLIGHT, async (id) => ({
    id,
    entry: await ledger.entry(id),
  }));
  return new Map(entries.flatMap(({ id, entry }) => (entry ? [[id, entry.digest]] : [])));
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
    .option(
      '--against-stack',
      'also look up each batch id in the stack’s ledger (the global --target): one sent before is a repeat, or with other content a batch conflict',
    )
    .option('--json', 'print every line’s verdict as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  npx onceflow validate fix.ndjson && npx onceflow send fix.ndjson\n' +
        '  npx onceflow generate --orders 100 --invalid-rate 0.1 | npx onceflow validate -\n' +
        '  npx onceflow --target aws validate fix.ndjson --against-stack',
    )
    .action(
      run(async (file: string, o: Options) => {
        const { bodies, lineOf } = bodyLines(readInput(file));
        const alone = preflight(bodies, o.maxBodyBytes);
        const verdicts = o.againstStack
          ? preflight(bodies, o.maxBodyBytes, { known: await ledgerDigests(alone) })
          : alone;
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
