/**
 * `onceflow hours`: each hour's lifecycle as consumers see it — open, final, or amended after
 * final — with its revision, events and amendments, from the hour objects and the day indexes
 * (an hour without events is listed once it is final). For operators, an open hour the finalizer
 * has closed shows `closing`: under latePolicy quarantine its late events are already refused,
 * and it becomes final on the finalizer's next run once no batch in progress holds it.
 */
import Table from 'cli-table3';
import type { Command } from 'commander';
import { DynamoFinalMarks } from '../../adapters/dynamo-hours.ts';
import { S3Store } from '../../adapters/s3.ts';
import { counted } from '../../local/render.ts';
import type { FinalMarks } from '../../shared/finalizer.ts';
import { type HourState, stateOf } from '../../shared/lifecycle.ts';
import { json, run, target } from '../program.ts';
import { type Interval, parseInterval } from './interval.ts';

/** The consumer's states, and `closing`: open in its object, closed by the finalizer. */
export type HourRowState = HourState | 'closing';

export interface HourRow {
  readonly hour: string;
  readonly state: HourRowState;
  readonly revision: number;
  readonly events: number;
  readonly amendments: number;
  readonly finalizedAt?: string;
  readonly amendedAt?: string;
}

/**
 * Every hour with an object, and every final hour without events, sorted by hour; only those in
 * `interval` (from inclusive, to exclusive) when one is given.
 */
export const listHours = async (
  store: S3Store,
  marks: Pick<FinalMarks, 'marksOf'>,
  interval?: Interval,
): Promise<HourRow[]> => {
  const rows = new Map<string, HourRow>();
  const objects = await store.listHourObjects();
  const open = objects.filter((o) => stateOf(o.lifecycle) === 'open').map((o) => o.aggregate.hour);
  const closed = await marks.marksOf(open);
  for (const { aggregate, lifecycle } of objects) {
    rows.set(aggregate.hour, {
      hour: aggregate.hour,
      state: closed.has(aggregate.hour) ? 'closing' : stateOf(lifecycle),
      revision: aggregate.revision,
      events: aggregate.events,
      amendments: lifecycle.amendments ?? 0,
      ...(lifecycle.finalizedAt ? { finalizedAt: lifecycle.finalizedAt } : {}),
      ...(lifecycle.amendedAt ? { amendedAt: lifecycle.amendedAt } : {}),
    });
  }
  for (const index of await store.listDayIndexes())
    for (const h of index.hours)
      if (!rows.has(h.hour))
        rows.set(h.hour, { hour: h.hour, state: 'final', revision: 0, events: 0, amendments: 0 });
  const inInterval = (hour: string) => {
    const ms = Date.parse(hour);
    return !interval || (ms >= interval.fromMs && ms < interval.toMs);
  };
  return [...rows.values()]
    .filter((r) => inInterval(r.hour))
    .sort((a, b) => (a.hour < b.hour ? -1 : 1));
};

export const register = (program: Command): void => {
  program
    .command('hours')
    .description(
      'each hour’s state (open, closing, final, amended), revision, events and amendments',
    )
    .option('--from <time>', 'first hour (inclusive)')
    .option('--to <time>', 'end hour (exclusive)')
    .option('--json', 'print JSON sorted by hour')
    .addHelpText('after', '\nExample:\n  npx onceflow hours --from 2026-10-01 --to 2026-10-02')
    .action(
      run(async (o: { from?: string; to?: string; json?: boolean }) => {
        const interval = parseInterval(o.from, o.to, false);
        const t = await target();
        const store = new S3Store(t.clients.s3, t.output('BucketName'));
        const marks = new DynamoFinalMarks(t.clients.dynamo, t.output('TableName'));
        const rows = await listHours(store, marks, interval);
        if (o.json) {
          json(rows);
          return 0;
        }
        const table = new Table({
          head: ['hour (UTC)', 'state', 'revision', 'events', 'amendments', 'finalized at'],
          style: { head: [], border: [], compact: true },
        });
        for (const r of rows)
          table.push([
            r.hour,
            r.state,
            String(r.revision),
            String(r.events),
            String(r.amendments),
            r.finalizedAt ?? '',
          ]);
        const count = (s: HourRowState) => rows.filter((r) => r.state === s).length;
        const closing = count('closing') > 0 ? `, ${count('closing')} closing` : '';
        console.log(
          `${table.toString()}\n${counted(rows.length, 'hour')}: ${count('open')} open${closing}, ${count('final')} final, ${count('amended')} amended`,
        );
        return 0;
      }),
    );
};
