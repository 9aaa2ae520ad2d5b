/** `onceflow reconcile` and `verify`: hour objects against the counters. */

import { DynamoCounterReader } from '../../adapters/dynamo.ts';
import { S3Store } from '../../adapters/s3.ts';
import { planHour, publishHour } from '../../shared/aggregator.ts';
import { hoursBetween, parseHour } from '../../shared/time.ts';
import type { Target } from '../target.ts';
import { aggregatorPortsFor, type Interval } from './interval.ts';

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
  const plans: HourPlan[] = [];
  for (const hour of hoursBetween(interval.fromMs, interval.toMs)) {
    const { stored, aggregate, action } = await planHour(hour, ports);
    if (!stored && aggregate.events === 0) continue; // nothing there, nothing to do
    if (!dryRun && action !== 'unchanged') await publishHour(hour, ports);
    plans.push({
      hour,
      action,
      events: aggregate.events,
      revision: aggregate.revision,
      ...(stored?.aggregate ? { storedRevision: stored.aggregate.revision } : {}),
    });
  }
  return plans;
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
  const differences: Difference[] = [];
  for (const hour of hours) {
    const { stored, aggregate, action } = await planHour(hour, ports);
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
