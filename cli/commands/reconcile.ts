/** `onceflow reconcile` and `verify`: hour objects against the counters. */
import Table from 'cli-table3';
import type { Command } from 'commander';
import { DynamoCounterReader } from '../../adapters/dynamo-counters.ts';
import { S3Store } from '../../adapters/s3.ts';
import { counted } from '../../local/render.ts';
import { type AggregatorPorts, planHour, publishHour } from '../../shared/aggregator.ts';
import { mapLimit } from '../../shared/concurrency.ts';
import { hoursBetween, parseHour } from '../../shared/time.ts';
import { json, run, target } from '../program.ts';
import type { Target } from '../target.ts';
import { type Interval, parseInterval } from './interval.ts';

/** The aggregator's ports on a target's table and bucket. */
const aggregatorPortsFor = (target: Target): AggregatorPorts => ({
  counters: new DynamoCounterReader(target.clients.dynamo, target.output('TableName')),
  objects: new S3Store(target.clients.s3, target.output('BucketName')),
  now: Date.now,
});

/**
 * Hours planned (and published) at once. Each is a few round trips (the object, its counters,
 * the write) independent of every other hour's, so a month's 720 hours one at a time was
 * 720 times their latency; 16 stays well within the SDK's 50 sockets per client.
 */
const HOURS_IN_FLIGHT = 16;

/** Hours that have counter items (all, or those in the interval). */
export const hoursWithCounters = async (target: Target, interval?: Interval): Promise<string[]> => {
  const hours = await new DynamoCounterReader(
    target.clients.dynamo,
    target.output('TableName'),
  ).hours();
  return hours.filter((h) => inInterval(h, interval));
};

const inInterval = (hour: string, interval?: Interval) => {
  if (!interval) return true;
  const ms = parseHour(hour) ?? Number.NaN;
  return ms >= interval.fromMs && ms < interval.toMs;
};

export interface HourPlan {
  readonly hour: string;
  readonly action: 'write' | 'delete' | 'unchanged';
  readonly events: number;
  readonly storedRevision?: number;
  readonly revision: number;
}

/** Recomputes every hour of the interval from DynamoDB; unless dry, rewrites or deletes its object. */
export const reconcile = async (
  target: Target,
  interval: Interval,
  dryRun: boolean,
): Promise<HourPlan[]> => {
  const ports = aggregatorPortsFor(target);
  const plans = await mapLimit(
    hoursBetween(interval.fromMs, interval.toMs),
    HOURS_IN_FLIGHT,
    async (hour): Promise<HourPlan | undefined> => {
      const { stored, aggregate, action } = await planHour(hour, ports);
      if (!stored && aggregate.events === 0) return undefined; // nothing there, nothing to do
      if (!dryRun && action !== 'unchanged') await publishHour(hour, ports);
      return {
        hour,
        action,
        events: aggregate.events,
        revision: aggregate.revision,
        ...(stored?.aggregate ? { storedRevision: stored.aggregate.revision } : {}),
      };
    },
  );
  return plans.filter((plan) => plan !== undefined);
};

export interface Difference {
  readonly hour: string;
  readonly problem: 'missing-object' | 'orphan-object' | 'different' | 'unreadable-object';
  readonly detail: string;
}

/** Compares every hour object with the value recomputed from DynamoDB. */
export const verify = async (
  target: Target,
  interval?: Interval,
): Promise<{ checked: number; differences: Difference[] }> => {
  const ports = aggregatorPortsFor(target);
  const store = new S3Store(target.clients.s3, target.output('BucketName'));
  const objectHours = (await store.listAggregates()).map((a) => a.hour);
  const hours = [...new Set([...objectHours, ...(await hoursWithCounters(target, interval))])]
    .filter((h) => inInterval(h, interval))
    .sort();
  const plans = await mapLimit(hours, HOURS_IN_FLIGHT, async (hour) => ({
    hour,
    ...(await planHour(hour, ports)),
  }));
  const differences: Difference[] = [];
  for (const { hour, stored, aggregate, action } of plans) {
    if (action === 'unchanged') continue;
    if (!stored)
      differences.push({
        hour,
        problem: 'missing-object',
        detail: `${aggregate.events} events in DynamoDB, no object in S3`,
      });
    else if (aggregate.events === 0)
      differences.push({
        hour,
        problem: 'orphan-object',
        detail: 'an object for an hour without events',
      });
    else if (!stored.aggregate)
      differences.push({
        hour,
        problem: 'unreadable-object',
        detail: 'the object is not a valid aggregate',
      });
    else {
      differences.push({
        hour,
        problem: 'different',
        detail: `S3 has ${stored.aggregate.events} events (revision ${stored.aggregate.revision}), DynamoDB ${aggregate.events} (revision ${aggregate.revision})`,
      });
    }
  }
  return { checked: hours.length, differences };
};

export const register = (program: Command): void => {
  program
    .command('reconcile')
    .description(
      'recompute every hour of [from, to) from DynamoDB and rewrite or delete its S3 object',
    )
    .requiredOption('--from <time>', 'first hour (inclusive)')
    .requiredOption('--to <time>', 'end hour (exclusive)')
    .option(
      '--dry-run',
      'print the plan (write / delete / unchanged per hour) without changing anything',
    )
    .option('--json', 'print the plan as JSON: [{hour, action, events, revision, storedRevision}]')
    .addHelpText(
      'after',
      '\nExample:\n  npx onceflow reconcile --from 2026-10-01 --to 2026-10-02 --dry-run',
    )
    .action(
      run(async (o: { from: string; to: string; dryRun?: boolean; json?: boolean }) => {
        const interval = parseInterval(o.from, o.to, true);
        if (!interval) return 1;
        const plans = await reconcile(await target(), interval, o.dryRun ?? false);
        if (o.json) {
          json(plans);
          return 0;
        }
        const table = new Table({
          head: ['hour', o.dryRun ? 'plan' : 'done', 'events', 'revision (S3 → DynamoDB)'],
          style: { head: [], border: [], compact: true },
        });
        for (const p of plans)
          table.push([
            p.hour,
            p.action,
            String(p.events),
            `${p.storedRevision ?? '—'} → ${p.action === 'delete' ? '—' : p.revision}`,
          ]);
        console.log(table.toString());
        const count = (a: string) => plans.filter((p) => p.action === a).length;
        console.log(
          `${o.dryRun ? 'would write' : 'wrote'} ${count('write')}, ${o.dryRun ? 'would delete' : 'deleted'} ${count('delete')}, unchanged ${count('unchanged')}`,
        );
        return 0;
      }),
    );

  program
    .command('verify')
    .description('check every S3 hour object against DynamoDB; exit 1 on any difference')
    .option('--from <time>', 'first hour (inclusive)')
    .option('--to <time>', 'end hour (exclusive)')
    .option('--json', 'print {checked, differences: [{hour, problem, detail}]}')
    .addHelpText('after', '\nExample:\n  npx onceflow verify --from 2026-10-01 --to 2026-10-02')
    .action(
      run(async (o: { from?: string; to?: string; json?: boolean }) => {
        const { checked, differences } = await verify(
          await target(),
          parseInterval(o.from, o.to, false),
        );
        if (o.json) {
          json({ checked, differences });
          return differences.length === 0 ? 0 : 1;
        }
        for (const d of differences) console.log(`${d.hour}  ${d.problem}: ${d.detail}`);
        console.log(
          `${counted(checked, 'hour')} checked, ${counted(differences.length, 'difference')}`,
        );
        return differences.length === 0 ? 0 : 1;
      }),
    );
};
