/**
 * Lambda's event source mapping API on the local edge, answered from the runtime's pollers:
 * `ListEventSourceMappings`, `GetEventSourceMapping`, `Create`/`DeleteEventSourceMapping`, and
 * `UpdateEventSourceMapping` with
 * `Enabled` (pausing a trigger is how an operator stops the bleeding), `BatchSize`,
 * `MaximumBatchingWindowInSeconds` and `ScalingConfig` (slowing a function down without
 * stopping it), `FunctionResponseTypes` and `FilterCriteria`. As on AWS, a mapping reads `Disabling` until its
 * running batches finish and refuses another change meanwhile (`ResourceInUseException`);
 * settings are checked by Lambda's rules for SQS, and the answer names the transition it
 * started.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import * as v from 'valibot';
import {
  type FilterPattern,
  InvalidFilterError,
  parseFilterCriteria,
  UnsupportedFilterError,
} from './event-filter.ts';
import { type MappingChange, mappingChanges } from './hot-swap.ts';
import { readBody } from './http.ts';
import { type MappingCheck, mappingRefusal } from './lambda-quotas.ts';
import { error, json, notJson, parseJson } from './lambda-rest.ts';
import type { LocalFunction, LocalQueue } from './provision.ts';
import { LOCAL_ACCOUNT } from './provision-functions.ts';
import type { MappingSettings, MappingState } from './sqs-poller.ts';
import type { Template } from './template.ts';

/** What a running stack lends the edge to create and delete its functions' mappings. */
export interface MappingControl {
  /** The stack's queue with this ARN, the only queues a new mapping may poll. */
  queue(arn: string): Pick<LocalQueue, 'arn' | 'attributes'> | undefined;
  /** Starts polling the queue for the function (by name); the edge has checked the settings. */
  create(
    functionName: string,
    queueArn: string,
    settings: MappingView,
    enabled: boolean,
  ): LocalMapping;
  /** Stops the mapping's poller (the batches it runs finish) and forgets it. */
  delete(uuid: string): void;
}

/** A running stack as the mappings API reads it. */
export interface MappingBackend {
  readonly region: string;
  readonly functions: readonly Pick<LocalFunction, 'name' | 'timeoutSeconds'>[];
  readonly mappings: readonly LocalMapping[];
  readonly mappingControl?: MappingControl;
}

/** A mapping's settings as its API shows them: no concurrency unless its ScalingConfig sets one. */
export type MappingView = Omit<MappingSettings, 'maxConcurrency'> & {
  readonly maxConcurrency: number | undefined;
};

/** An event source mapping as the runtime's poller runs it. */
export interface LocalMapping {
  /** Its logical id in the template. */
  readonly logicalId: string;
  readonly uuid: string;
  readonly functionName: string;
  readonly queueArn: string;
  /** What its settings are checked against: its queue and its function's timeout now. */
  limits(): Pick<MappingCheck, 'queue' | 'functionTimeoutSeconds'>;
  /** `Disabling` while a batch received before a pause still runs. */
  state(): MappingState;
  /** When it was created, last changed, or settled in Disabled (ms since the epoch). */
  lastModified(): number;
  settings(): MappingView;
  /** Pauses or resumes the poller; running invocations finish. */
  setEnabled(enabled: boolean): void;
  /** Takes new settings from the next receive on. */
  configure(settings: MappingView): void;
}

/** What `UpdateEventSourceMapping` may change locally; any other field is refused by name. */
const UpdateSchema = v.strictObject({
  Enabled: v.optional(v.boolean()),
  BatchSize: v.optional(v.pipe(v.number(), v.integer())),
  MaximumBatchingWindowInSeconds: v.optional(v.pipe(v.number(), v.integer())),
  ScalingConfig: v.optional(
    v.strictObject({ MaximumConcurrency: v.optional(v.pipe(v.number(), v.integer())) }),
  ),
  FunctionResponseTypes: v.optional(v.array(v.picklist(['ReportBatchItemFailures']))),
  FilterCriteria: v.optional(
    v.strictObject({
      Filters: v.optional(v.array(v.strictObject({ Pattern: v.optional(v.string()) }))),
    }),
  ),
});

/** What `CreateEventSourceMapping` takes locally: an SQS mapping's fields. */
const CreateSchema = v.strictObject({
  EventSourceArn: v.string(),
  FunctionName: v.string(),
  ...UpdateSchema.entries,
});

const mappingOf = (region: string, m: LocalMapping, state: string = m.state()) => {
  const { batchSize, batchingWindowSeconds, maxConcurrency, reportBatchItemFailures, filters } =
    m.settings();
  return {
    UUID: m.uuid,
    FunctionArn: `arn:aws:lambda:${region}:${LOCAL_ACCOUNT}:function:${m.functionName}`,
    EventSourceArn: m.queueArn,
    BatchSize: batchSize,
    MaximumBatchingWindowInSeconds: batchingWindowSeconds,
    ...(maxConcurrency === undefined
      ? {}
      : { ScalingConfig: { MaximumConcurrency: maxConcurrency } }),
    FunctionResponseTypes: reportBatchItemFailures ? ['ReportBatchItemFailures'] : [],
    // Each pattern as compact JSON (Lambda echoes the text it was given).
    ...(filters && filters.length > 0
      ? { FilterCriteria: { Filters: filters.map((p) => ({ Pattern: JSON.stringify(p) })) } }
      : {}),
    State: state,
    // Every change locally is an operator's (Lambda's own, such as disabling a mapping whose
    // queue was deleted, does not happen here).
    StateTransitionReason: 'USER_INITIATED',
    LastModified: m.lastModified() / 1000,
  };
};

const responseTypes = (m: MappingView) =>
  m.reportBatchItemFailures ? 'ReportBatchItemFailures' : 'none';

/** `batch size 10 → 4, concurrency 10 → none`: what moved from `before` to `after`. */
const settingsMoved = (before: MappingView, after: MappingView) => [
  ...(
    [
      ['batch size', 'batchSize'],
      ['batching window', 'batchingWindowSeconds'],
      ['concurrency', 'maxConcurrency'],
    ] as const
  )
    .filter(([, key]) => before[key] !== after[key])
    .map(([label, key]) => `${label} ${before[key] ?? 'none'} → ${after[key] ?? 'none'}`),
  ...(before.reportBatchItemFailures === after.reportBatchItemFailures
    ? []
    : [`response types ${responseTypes(before)} → ${responseTypes(after)}`]),
  ...(isDeepStrictEqual(before.filters ?? [], after.filters ?? [])
    ? []
    : [`filters ${before.filters?.length ?? 0} → ${after.filters?.length ?? 0}`]),
];

/**
 * A change's FilterCriteria as the poller applies them, or Lambda's refusal of an invalid
 * pattern; a pattern the local runtime cannot apply (a filter beyond the body) is refused by
 * name rather than taken and ignored.
 */
const filtersOf = (
  criteria: unknown,
): { readonly filters: FilterPattern[] } | { readonly refusal: string } => {
  try {
    return { filters: parseFilterCriteria(criteria) };
  } catch (error) {
    if (error instanceof InvalidFilterError) return { refusal: error.message };
    if (error instanceof UnsupportedFilterError)
      return { refusal: `The local runtime cannot apply these FilterCriteria: ${error.message}` };
    throw error;
  }
};

/**
 * Takes a change through Lambda's rules for SQS mappings: applied, with the settings that moved
 * and whether it was enabled or disabled; or Lambda's refusal, with nothing applied. The one path
 * of `UpdateEventSourceMapping` and of a redeploy.
 */
const applyChange = (
  m: LocalMapping,
  c: Omit<MappingChange, 'logicalId'>,
): { readonly refusal: string } | { readonly moved: string[]; readonly toggled: boolean } => {
  const before = m.settings();
  const parsed = c.filterCriteria === undefined ? undefined : filtersOf(c.filterCriteria);
  if (parsed && 'refusal' in parsed) return parsed;
  const next: MappingView = {
    batchSize: c.batchSize ?? before.batchSize,
    batchingWindowSeconds: c.batchingWindowSeconds ?? before.batchingWindowSeconds,
    maxConcurrency: c.scaling ? c.scaling.maxConcurrency : before.maxConcurrency,
    reportBatchItemFailures: c.reportBatchItemFailures ?? before.reportBatchItemFailures,
    filters: parsed ? parsed.filters : before.filters,
  };
  const refusal = mappingRefusal({ ...next, ...m.limits() });
  if (refusal) return { refusal };
  const moved = settingsMoved(before, next);
  if (moved.length > 0) m.configure(next);
  const toggled = c.enabled !== undefined && c.enabled !== (m.state() === 'Enabled');
  if (toggled) m.setEnabled(c.enabled === true);
  return { moved, toggled };
};

/** Applies an update; answers as Lambda does, with the transition it started. */
const update = (res: ServerResponse, region: string, m: LocalMapping, body: string) => {
  const parsed = parseJson(body, {});
  if (!parsed) return notJson(res);
  const input = v.safeParse(UpdateSchema, parsed.value);
  if (!input.success)
    return error(
      res,
      400,
      'InvalidParameterValueException',
      `The local runtime changes only Enabled, BatchSize, MaximumBatchingWindowInSeconds, ScalingConfig.MaximumConcurrency, FunctionResponseTypes and FilterCriteria of a mapping: ${v.summarize(input.issues)}`,
    );
  const {
    Enabled,
    BatchSize,
    MaximumBatchingWindowInSeconds,
    ScalingConfig,
    FunctionResponseTypes,
    FilterCriteria,
  } = input.output;
  const state = m.state();
  // As Lambda refuses a change to a mapping in transition (it finishes the one under way).
  if (state !== 'Enabled' && state !== 'Disabled')
    return error(
      res,
      400,
      'ResourceInUseException',
      `Cannot update the event source mapping ${m.uuid}: it is ${state}. Try again once it is ${state === 'Disabling' ? 'Disabled' : 'Enabled'}.`,
    );
  const outcome = applyChange(m, {
    batchSize: BatchSize,
    batchingWindowSeconds: MaximumBatchingWindowInSeconds,
    // An empty ScalingConfig removes the cap, as on AWS.
    scaling: ScalingConfig && { maxConcurrency: ScalingConfig.MaximumConcurrency },
    enabled: Enabled,
    reportBatchItemFailures: FunctionResponseTypes?.includes('ReportBatchItemFailures'),
    filterCriteria: FilterCriteria,
  });
  if ('refusal' in outcome) return error(res, 400, refusalType(outcome.refusal), outcome.refusal);
  const transition = outcome.toggled
    ? Enabled
      ? 'Enabling'
      : 'Disabling'
    : outcome.moved.length > 0
      ? 'Updating'
      : state;
  return json(res, 202, mappingOf(region, m, transition));
};

/** Lambda's error type for a refusal in its own words. */
const refusalType = (refusal: string) =>
  refusal.startsWith('1 validation error')
    ? 'ValidationException'
    : 'InvalidParameterValueException';

/**
 * Creates a mapping as Lambda does for SQS: Lambda's defaults (10 messages, no window, enabled),
 * its rules, and one mapping per function and queue. Only the stack's own queues can be polled.
 */
const create = (res: ServerResponse, backends: readonly MappingBackend[], body: string) => {
  const parsed = parseJson(body, {});
  if (!parsed) return notJson(res);
  const input = v.safeParse(CreateSchema, parsed.value);
  if (!input.success)
    return error(
      res,
      400,
      'InvalidParameterValueException',
      `The local runtime creates SQS mappings from EventSourceArn, FunctionName, Enabled, BatchSize, MaximumBatchingWindowInSeconds, ScalingConfig.MaximumConcurrency, FunctionResponseTypes and FilterCriteria: ${v.summarize(input.issues)}`,
    );
  const { EventSourceArn: queueArn, FunctionName, ...o } = input.output;
  const name = FunctionName.split(':').pop() ?? '';
  const backend = backends.find((b) => b.functions.some((f) => f.name === name));
  const fn = backend?.functions.find((f) => f.name === name);
  if (!backend?.mappingControl || !fn)
    return error(res, 404, 'ResourceNotFoundException', `Function does not exist: ${FunctionName}`);
  const queue = backend.mappingControl.queue(queueArn);
  if (!queue)
    return error(
      res,
      400,
      'InvalidParameterValueException',
      `The local runtime polls only its stack's queues, not ${queueArn}`,
    );
  const existing = backend.mappings.find((m) => m.functionName === name && m.queueArn === queueArn);
  if (existing)
    return error(
      res,
      409,
      'ResourceConflictException',
      `An event source mapping with SQS arn (" ${queueArn} ") and function (" ${name} ") already exists. Please update or delete the existing mapping with UUID ${existing.uuid}`,
    );
  const filters = o.FilterCriteria === undefined ? { filters: [] } : filtersOf(o.FilterCriteria);
  if ('refusal' in filters) return error(res, 400, refusalType(filters.refusal), filters.refusal);
  const settings: MappingView = {
    batchSize: o.BatchSize ?? 10,
    batchingWindowSeconds: o.MaximumBatchingWindowInSeconds ?? 0,
    maxConcurrency: o.ScalingConfig?.MaximumConcurrency,
    reportBatchItemFailures: o.FunctionResponseTypes?.includes('ReportBatchItemFailures') === true,
    filters: filters.filters,
  };
  const refusal = mappingRefusal({
    ...settings,
    queue: {
      visibilityTimeoutSeconds: Number(queue.attributes.VisibilityTimeout ?? 30),
      fifo: queue.attributes.FifoQueue === 'true',
    },
    functionTimeoutSeconds: fn.timeoutSeconds,
  });
  if (refusal) return error(res, 400, refusalType(refusal), refusal);
  const m = backend.mappingControl.create(name, queueArn, settings, o.Enabled ?? true);
  return json(res, 202, mappingOf(backend.region, m, 'Creating'));
};

/**
 * ListEventSourceMappings, GetEventSourceMapping, UpdateEventSourceMapping, and Create and
 * DeleteEventSourceMapping (a trigger deleted and made again by hand, as in an incident).
 */
export const answerMappings = async (
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  backends: readonly MappingBackend[],
  uuid: string | undefined,
) => {
  const body = await readBody(req);
  if (uuid === undefined && req.method === 'POST') return create(res, backends, body);
  const all = backends.flatMap((b) => b.mappings.map((m) => ({ backend: b, m })));
  if (uuid === undefined && req.method === 'GET') {
    const fn = url.searchParams.get('FunctionName')?.split(':').pop();
    const EventSourceMappings = all
      .filter(({ m }) => fn === undefined || m.functionName === fn)
      .map(({ backend, m }) => mappingOf(backend.region, m));
    return json(res, 200, { EventSourceMappings });
  }
  const found = all.find(({ m }) => m.uuid === uuid);
  if (!found)
    return error(
      res,
      404,
      'ResourceNotFoundException',
      `The resource you requested does not exist. (${uuid})`,
    );
  const { backend, m } = found;
  if (req.method === 'PUT') return update(res, backend.region, m, body);
  if (req.method === 'DELETE') {
    const answer = mappingOf(backend.region, m, 'Deleting');
    backend.mappingControl?.delete(m.uuid);
    return json(res, 202, answer);
  }
  return json(res, 200, mappingOf(backend.region, m));
};

/**
 * Applies a redeploy's changes to mappings, from the template `deployed` last to `next`, as
 * CloudFormation updates them: through Lambda's rules, as `UpdateEventSourceMapping` would. One
 * line per mapping: what moved, or the refusal; a refused mapping keeps its deployed definition,
 * so that the next template is compared with what runs.
 */
export const applyMappingChanges = (
  deployed: Template,
  next: Template,
  mappings: readonly LocalMapping[],
): { readonly lines: string[]; readonly deployed: Template } => {
  const resources = { ...next.Resources };
  const lines = mappingChanges(deployed, next).flatMap((c) => {
    const m = mappings.find((x) => x.logicalId === c.logicalId);
    if (!m) return [];
    const outcome = applyChange(m, c);
    if ('refusal' in outcome) {
      const kept = deployed.Resources[c.logicalId];
      if (kept) resources[c.logicalId] = kept;
      return [`${c.logicalId} not updated: ${outcome.refusal}`];
    }
    const moved = [
      ...outcome.moved,
      ...(outcome.toggled ? [c.enabled ? 'enabled' : 'disabled'] : []),
    ];
    return [`${c.logicalId}: ${moved.join(', ') || 'unchanged'}`];
  });
  return { lines, deployed: { ...next, Resources: resources } };
};
