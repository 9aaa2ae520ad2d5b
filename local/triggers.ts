/**
 * What invokes a template's functions, as the local runtime reads it: SQS event source mappings
 * (EventBridge's rules are read in `rules.ts`), and the event a scheduled rule sends.
 */
import { randomUUID } from 'node:crypto';
import {
  type FilterPattern,
  InvalidFilterError,
  parseFilterCriteria,
  UnsupportedFilterError,
} from './event-filter.ts';
import { asRecord, type ResourceEntries, referencesOf } from './template.ts';

export interface LocalEventSourceMapping {
  readonly logicalId: string;
  readonly functionLogicalId: string;
  readonly queueLogicalId: string;
  readonly batchSize: number;
  readonly batchingWindowSeconds: number;
  /** Undefined: no cap beyond the local default. */
  readonly maxConcurrency: number | undefined;
  readonly reportBatchItemFailures: boolean;
  readonly enabled: boolean;
  /** Its `FilterCriteria`, applied to each message's body (empty: none, every message passes). */
  readonly filters: readonly FilterPattern[];
  /** Why its `FilterCriteria` are not applied locally, when they are not. */
  readonly filtersNotApplied?: string;
}

/** Whether a mapping's `FunctionResponseTypes` has Lambda read partial batch responses. */
export const reportsItemFailures = (types: unknown): boolean =>
  Array.isArray(types) && types.includes('ReportBatchItemFailures');

/** Every SQS event source mapping between one of `queueIds` and one of `functionIds`. */
export const eventSourceMappings = (
  resources: ResourceEntries,
  queueIds: readonly string[],
  functionIds: readonly string[],
): LocalEventSourceMapping[] => {
  const mappings: LocalEventSourceMapping[] = [];
  for (const [id, resource] of resources.filter(
    ([, r]) => r.Type === 'AWS::Lambda::EventSourceMapping',
  )) {
    const p = asRecord(resource.Properties);
    const queueLogicalId = referencesOf(p.EventSourceArn).find((r) => queueIds.includes(r));
    const functionLogicalId = referencesOf(p.FunctionName).find((r) => functionIds.includes(r));
    if (!queueLogicalId || !functionLogicalId) continue;
    const scaling = asRecord(p.ScalingConfig);
    let filters: FilterPattern[] = [];
    let filtersNotApplied: string | undefined;
    try {
      filters = parseFilterCriteria(p.FilterCriteria);
    } catch (error) {
      if (error instanceof UnsupportedFilterError) filtersNotApplied = error.message;
      else if (error instanceof InvalidFilterError)
        throw new Error(`event source mapping ${id} cannot be created: ${error.message}`, {
          cause: error,
        });
      else throw error;
    }
    mappings.push({
      logicalId: id,
      functionLogicalId,
      queueLogicalId,
      batchSize: Number(p.BatchSize ?? 10),
      batchingWindowSeconds: Number(p.MaximumBatchingWindowInSeconds ?? 0),
      maxConcurrency:
        scaling.MaximumConcurrency === undefined ? undefined : Number(scaling.MaximumConcurrency),
      reportBatchItemFailures: reportsItemFailures(p.FunctionResponseTypes),
      enabled: p.Enabled !== false,
      filters,
      ...(filtersNotApplied === undefined ? {} : { filtersNotApplied }),
    });
  }
  return mappings;
};

/** The event EventBridge sends a rule's target on its schedule. */
export const scheduledEvent = (o: {
  readonly account: string;
  readonly region: string;
  /** The rule's ARN; none when the caller is not a rule (a test invocation). */
  readonly ruleArn?: string;
  /** The time the run was scheduled for; default now. */
  readonly timeMs?: number;
}) => ({
  version: '0',
  id: randomUUID(),
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: o.account,
  time: new Date(o.timeMs ?? Date.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  region: o.region,
  resources: o.ruleArn === undefined ? [] : [o.ruleArn],
  detail: {},
});
