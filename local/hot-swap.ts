/**
 * What a new synthesis of a running stack changes, split the way Lambda's own updates split it:
 * a function's code and settings (handler, environment, timeout, memory, the event invoke config
 * of its asynchronous invocations) are swapped in place,
 * as `UpdateFunctionCode` and `UpdateFunctionConfiguration` do, and so are an event source
 * mapping's batch size, batching window, scaling and `Enabled`, as `UpdateEventSourceMapping`
 * does; queues, tables, buckets, the rest of a mapping, schedules and outputs were provisioned
 * from the first template and change only with a restart. Alarms are updated in place by the
 * runtime (`AlarmBook.redeploy`). Resources with no local meaning (IAM, log groups…) are not
 * compared: nothing local depends on them.
 */
import { isDeepStrictEqual } from 'node:util';
import type { LocalFunction } from './provision.ts';
import { asRecord, type Template } from './template.ts';
import { reportsItemFailures } from './triggers.ts';

/** Resource types the runtime built from the first template and keeps until it restarts. */
const PROVISIONED_AT_START = new Set([
  'AWS::SQS::Queue',
  'AWS::DynamoDB::Table',
  'AWS::DynamoDB::GlobalTable',
  'AWS::S3::Bucket',
  'AWS::Lambda::EventSourceMapping',
  'AWS::Events::Rule',
]);

const FUNCTION = 'AWS::Lambda::Function';
const MAPPING = 'AWS::Lambda::EventSourceMapping';

/** What `UpdateEventSourceMapping` changes in place, so a redeploy does too. */
const MAPPING_IN_PLACE = [
  'BatchSize',
  'MaximumBatchingWindowInSeconds',
  'ScalingConfig',
  'Enabled',
  'FunctionResponseTypes',
  'FilterCriteria',
];

const withoutInPlace = (properties: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(properties).filter(([k]) => !MAPPING_IN_PLACE.includes(k)));

/** A mapping's settings the template changed, as its new values (undefined: taken away). */
export interface MappingChange {
  readonly logicalId: string;
  readonly batchSize?: number;
  readonly batchingWindowSeconds?: number;
  /** Present when the ScalingConfig changed; undefined inside: no maximum any more. */
  readonly scaling?: { readonly maxConcurrency: number | undefined };
  readonly enabled?: boolean;
  /** Present when FunctionResponseTypes changed: whether it holds ReportBatchItemFailures. */
  readonly reportBatchItemFailures?: boolean;
  /** Present when FilterCriteria changed: the new criteria as the template gives them ({} for none). */
  readonly filterCriteria?: unknown;
}

/**
 * The mappings whose in-place settings differ from `running` to `next`, with only what differs,
 * read as `eventSourceMappings` reads a template: what CloudFormation would update, leaving a
 * setting the template did not change as an operator last set it.
 */
export const mappingChanges = (running: Template, next: Template): MappingChange[] =>
  Object.entries(next.Resources).flatMap(([logicalId, after]) => {
    const before = running.Resources[logicalId];
    if (after.Type !== MAPPING || before?.Type !== MAPPING) return [];
    const [b, a] = [before.Properties, after.Properties];
    const differs = (key: string) => !isDeepStrictEqual(b[key], a[key]);
    const cap = asRecord(a.ScalingConfig).MaximumConcurrency;
    const change: MappingChange = {
      logicalId,
      ...(differs('BatchSize') ? { batchSize: Number(a.BatchSize ?? 10) } : {}),
      ...(differs('MaximumBatchingWindowInSeconds')
        ? { batchingWindowSeconds: Number(a.MaximumBatchingWindowInSeconds ?? 0) }
        : {}),
      ...(differs('ScalingConfig')
        ? { scaling: { maxConcurrency: cap === undefined ? undefined : Number(cap) } }
        : {}),
      ...(differs('Enabled') ? { enabled: a.Enabled !== false } : {}),
      ...(differs('FunctionResponseTypes')
        ? { reportBatchItemFailures: reportsItemFailures(a.FunctionResponseTypes) }
        : {}),
      ...(differs('FilterCriteria') ? { filterCriteria: a.FilterCriteria ?? {} } : {}),
    };
    return Object.keys(change).length > 1 ? [change] : [];
  });

/**
 * The changes from `running` to `next` that a running stack cannot apply, one line each
 * (`OrdersQueue (AWS::SQS::Queue) changed`); empty when only functions' code or settings moved.
 */
export const changesNeedingRestart = (running: Template, next: Template): string[] => {
  const changes: string[] = [];
  const ids = [...new Set([...Object.keys(running.Resources), ...Object.keys(next.Resources)])];
  for (const id of ids.sort()) {
    const before = running.Resources[id];
    const after = next.Resources[id];
    const type = after?.Type ?? before?.Type ?? '';
    if (!PROVISIONED_AT_START.has(type) && type !== FUNCTION) continue;
    if (!before || !after) {
      changes.push(`${id} (${type}) ${before ? 'removed' : 'added'}`);
      continue;
    }
    if (before.Type !== after.Type) changes.push(`${id} (${before.Type} → ${after.Type}) replaced`);
    else if (type === FUNCTION) {
      // A function's name is what its mappings, outputs and callers know it by.
      if (!isDeepStrictEqual(before.Properties.FunctionName, after.Properties.FunctionName))
        changes.push(`${id} (${type}) renamed`);
    } else if (type === MAPPING) {
      if (!isDeepStrictEqual(withoutInPlace(before.Properties), withoutInPlace(after.Properties)))
        changes.push(`${id} (${type}) changed`);
    } else if (!isDeepStrictEqual(before.Properties, after.Properties))
      changes.push(`${id} (${type}) changed`);
  }
  const outputs = [...new Set([...Object.keys(running.Outputs), ...Object.keys(next.Outputs)])];
  for (const name of outputs.sort())
    if (!isDeepStrictEqual(running.Outputs[name]?.Value, next.Outputs[name]?.Value))
      changes.push(`output ${name} changed`);
  return changes;
};

/** The functions of `next` whose code or settings differ from the running ones (by logical id). */
export const changedFunctions = (
  running: readonly LocalFunction[],
  next: readonly LocalFunction[],
): LocalFunction[] =>
  next.filter((fn) => {
    const current = running.find((r) => r.logicalId === fn.logicalId);
    return (
      current !== undefined &&
      (current.codeSha256 !== fn.codeSha256 ||
        current.handlerExport !== fn.handlerExport ||
        current.timeoutSeconds !== fn.timeoutSeconds ||
        current.memoryMb !== fn.memoryMb ||
        current.reservedConcurrency !== fn.reservedConcurrency ||
        !isDeepStrictEqual(current.environment, fn.environment) ||
        !isDeepStrictEqual(current.asyncInvoke, fn.asyncInvoke))
    );
  });
