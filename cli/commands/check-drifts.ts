/**
 * The settings `onceflow check --fix` compares, each between the deployed template and the
 * running stack: for each, what it would change to put the template's value back, and which of
 * `check`'s findings that answers. Pure; `check-fixes.ts` chooses among them.
 */
import * as v from 'valibot';
import type { AlarmStatus } from './alarms.ts';
import type { AlarmProperties } from './check-alarms.ts';
import {
  type FunctionFacts,
  QUEUE_OUTPUTS,
  type QueueFacts,
  RedriveSchema,
} from './check-rules.ts';
import {
  propertiesOf,
  type ScheduledRule,
  type Template,
  templateBoolean,
  templateNumber,
  UNRESOLVED,
} from './check-template.ts';
import { FUNCTIONS, type FunctionKey, isQueueFunction, type QueueFunction } from './logs.ts';

/** One call that puts a setting back. */
export type RepairRequest =
  | {
      readonly kind: 'queue-attributes';
      readonly queueUrl: string;
      readonly attributes: Readonly<Record<string, string>>;
    }
  | {
      readonly kind: 'response-types';
      readonly uuid: string;
      readonly functionResponseTypes: readonly 'ReportBatchItemFailures'[];
    }
  | {
      readonly kind: 'reserved-concurrency';
      readonly functionName: string;
      readonly value?: number;
    }
  | { readonly kind: 'timeout'; readonly functionName: string; readonly seconds: number }
  | {
      readonly kind: 'create-mapping';
      readonly functionName: string;
      readonly eventSourceArn: string;
      readonly properties: MappingProperties;
    }
  | {
      readonly kind: 'environment';
      readonly functionName: string;
      readonly variables: Readonly<Record<string, string>>;
    }
  | { readonly kind: 'create-rule'; readonly rule: ScheduledRule }
  | {
      readonly kind: 'create-queue';
      readonly queueName: string;
      readonly attributes: Readonly<Record<string, string>>;
    }
  | { readonly kind: 'alarm-actions'; readonly alarmName: string }
  | {
      readonly kind: 'create-alarm';
      readonly alarm: AlarmProperties & { readonly AlarmName: string };
    };

export interface Repair {
  readonly subject: string;
  readonly name: string;
  /** What changes, as an operator reads it: `VisibilityTimeout 20 → 180`. */
  readonly change: string;
  readonly request: RepairRequest;
}

/** What `check` read of the running stack, which the template is compared with. */
export interface LiveStack {
  readonly outputs: Readonly<Record<string, string>>;
  readonly queues: Readonly<Record<QueueFunction, QueueFacts>>;
  readonly functions: Readonly<Record<FunctionKey, FunctionFacts>>;
  /** Each function's trigger state as `onceflow status` reads it; `none`: nothing invokes it. */
  readonly triggers?: Readonly<Partial<Record<FunctionKey, string>>>;
  /** Each resource's physical id by logical id (`ListStackResources`), read by `--fix`. */
  readonly resources?: Readonly<Record<string, string>>;
  /** The stack's alarms as CloudWatch has them, when they could be read. */
  readonly alarms?: readonly AlarmStatus[];
}

/** A mapping's response types: the one type Lambda has for SQS. */
const ResponseTypesSchema = v.optional(v.array(v.picklist(['ReportBatchItemFailures'])), []);

/** What a trigger is created with: its template's SQS mapping properties, resolved. */
const MappingPropertiesSchema = v.object({
  BatchSize: v.optional(templateNumber),
  MaximumBatchingWindowInSeconds: v.optional(templateNumber),
  ScalingConfig: v.optional(v.object({ MaximumConcurrency: v.optional(templateNumber) })),
  FunctionResponseTypes: ResponseTypesSchema,
  FilterCriteria: v.optional(
    v.object({ Filters: v.optional(v.array(v.object({ Pattern: v.optional(v.string()) }))) }),
  ),
  Enabled: v.optional(templateBoolean),
});
export type MappingProperties = v.InferOutput<typeof MappingPropertiesSchema>;

/** A setting where the template and the running stack may differ, and what it answers. */
export interface Drift {
  /** The findings it answers: putting it back is the fix for any of them. */
  readonly answers: readonly { readonly subject: string; readonly name: string }[];
  readonly repair?: Repair;
  /** Why it cannot be put back, when it differs. */
  readonly unresolvable?: string;
}

const answers = (subject: string, ...names: string[]) => names.map((name) => ({ subject, name }));
const numberOr = (value: unknown, fallback: number) =>
  value === undefined ? fallback : Number(value);

/** SQS's value of each attribute the checks judge, when the template sets none. */
const SQS_DEFAULTS = { VisibilityTimeout: 30, MessageRetentionPeriod: 345_600, DelaySeconds: 0 };

/** An SQS attribute of a queue against the template. */
const attributeDrift =
  (subject: string) =>
  (
    name: string,
    queueUrl: string,
    properties: Readonly<Record<string, unknown>>,
    attribute: keyof typeof SQS_DEFAULTS,
    live: number,
  ): Drift => {
    const deployed = numberOr(properties[attribute], SQS_DEFAULTS[attribute]);
    return {
      answers: answers(subject, name),
      ...(live === deployed
        ? {}
        : {
            repair: {
              subject,
              name,
              change: `${attribute} ${live} → ${deployed}`,
              request: {
                kind: 'queue-attributes',
                queueUrl,
                attributes: { [attribute]: String(deployed) },
              },
            },
          }),
    };
  };

export const queueDrifts = (
  template: Template,
  live: LiveStack,
  resolve: (value: unknown) => unknown,
  fn: QueueFunction,
): Drift[] => {
  const o = QUEUE_OUTPUTS[fn];
  const queue = propertiesOf(template, o.queue);
  const dlq = propertiesOf(template, o.dlq);
  const url = live.outputs[o.queue];
  const dlqUrl = live.outputs[o.dlq];
  const facts = live.queues[fn];
  // A deleted queue has no settings to put back (`check-fixes.ts` says why).
  if (!queue || !dlq || url === undefined || dlqUrl === undefined || facts.queueMissing) return [];
  const subject = o.name;
  const at = attributeDrift(subject);
  const drifts = [
    at('visibility timeout', url, queue, 'VisibilityTimeout', facts.visibilityTimeoutS),
    at('DLQ retention', url, queue, 'MessageRetentionPeriod', facts.retentionS),
    ...(facts.dlqMissing
      ? []
      : [at('DLQ retention', dlqUrl, dlq, 'MessageRetentionPeriod', facts.dlqRetentionS)]),
    at('coalescing', url, queue, 'DelaySeconds', facts.delaySeconds),
  ];
  const names = ['dead-letter queue', 'maxReceiveCount'];
  const resolved = queue.RedrivePolicy === undefined ? undefined : resolve(queue.RedrivePolicy);
  const redrive = v.safeParse(v.optional(RedriveSchema), resolved);
  if (!redrive.success)
    return [
      ...drifts,
      { answers: answers(subject, ...names), unresolvable: 'its template value names no output' },
    ];
  const deployed = redrive.output;
  const same =
    facts.redrive?.deadLetterTargetArn === deployed?.deadLetterTargetArn &&
    facts.redrive?.maxReceiveCount === deployed?.maxReceiveCount;
  const show = (r: typeof deployed) =>
    r ? `${r.deadLetterTargetArn} after ${r.maxReceiveCount} receives` : 'none';
  return [
    ...drifts,
    {
      answers: answers(subject, ...names),
      ...(same
        ? {}
        : {
            repair: {
              subject,
              name:
                facts.redrive?.deadLetterTargetArn === deployed?.deadLetterTargetArn
                  ? 'maxReceiveCount'
                  : 'dead-letter queue',
              change: `RedrivePolicy ${show(facts.redrive)} → ${show(deployed)}`,
              request: {
                kind: 'queue-attributes',
                queueUrl: url,
                attributes: { RedrivePolicy: deployed ? JSON.stringify(deployed) : '' },
              },
            },
          }),
    },
  ];
};

/** A trigger to create as the template sets it, for a function that has none. */
const createDrift = (
  fn: FunctionKey,
  functionName: string,
  source: unknown,
  template: Readonly<Record<string, unknown>>,
  resolve: (value: unknown) => unknown,
): Drift => {
  const properties = v.safeParse(MappingPropertiesSchema, resolve(template));
  if (typeof source !== 'string' || !properties.success)
    return {
      answers: answers(fn, 'trigger'),
      unresolvable: 'its template properties do not resolve through the stack outputs',
    };
  const p = properties.output;
  const settings = [
    `batch size ${p.BatchSize ?? 10}`,
    ...(p.MaximumBatchingWindowInSeconds ? [`window ${p.MaximumBatchingWindowInSeconds} s`] : []),
    ...(p.ScalingConfig?.MaximumConcurrency
      ? [`maximum concurrency ${p.ScalingConfig.MaximumConcurrency}`]
      : []),
    ...(p.FunctionResponseTypes ?? []),
    ...(p.FilterCriteria?.Filters?.length ? [`${p.FilterCriteria.Filters.length} filters`] : []),
    ...(p.Enabled === false ? ['disabled'] : []),
  ];
  return {
    answers: answers(fn, 'trigger'),
    repair: {
      subject: fn,
      name: 'trigger',
      change: `create it from ${source}: ${settings.join(', ')}`,
      request: { kind: 'create-mapping', functionName, eventSourceArn: source, properties: p },
    },
  };
};

export const functionDrifts = (
  template: Template,
  live: LiveStack,
  resolve: (value: unknown) => unknown,
  fn: FunctionKey,
): Drift[] => {
  const output = FUNCTIONS[fn];
  const properties = propertiesOf(template, output);
  const functionName = live.outputs[output];
  if (!properties || functionName === undefined) return [];
  const facts = live.functions[fn];
  const drifts: Drift[] = [];

  const reserved = properties.ReservedConcurrentExecutions;
  const deployedReserved = reserved === undefined ? undefined : Number(reserved);
  const show = (n: number | undefined) => (n === undefined ? 'none' : String(n));
  drifts.push({
    answers: answers(fn, 'reserved concurrency'),
    ...(deployedReserved === facts.reservedConcurrency
      ? {}
      : {
          repair: {
            subject: fn,
            name: 'reserved concurrency',
            change: `reserved concurrency ${show(facts.reservedConcurrency)} → ${show(deployedReserved)}`,
            request: {
              kind: 'reserved-concurrency',
              functionName,
              ...(deployedReserved === undefined ? {} : { value: deployedReserved }),
            },
          },
        }),
  });

  // The function's timeout is half of its queue's visibility timeout judgement.
  const timeoutS = numberOr(properties.Timeout, 3);
  if (isQueueFunction(fn))
    drifts.push({
      answers: answers(QUEUE_OUTPUTS[fn].name, 'visibility timeout'),
      ...(timeoutS === facts.timeoutS
        ? {}
        : {
            repair: {
              subject: fn,
              name: 'timeout',
              change: `Timeout ${facts.timeoutS} → ${timeoutS}`,
              request: { kind: 'timeout', functionName, seconds: timeoutS },
            },
          }),
    });

  // Ingest's coalescing window is half of the `coalescing` judgement.
  const envAnswers = [
    ...answers(fn, 'wiring'),
    ...(fn === 'ingest' ? answers('aggregate queue', 'coalescing') : []),
  ];
  const variables = v.safeParse(
    v.object({ Variables: v.optional(v.record(v.string(), v.unknown()), {}) }),
    properties.Environment ?? {},
  );
  const deployedEnv = variables.success ? resolve(variables.output.Variables) : UNRESOLVED;
  const env = v.safeParse(v.record(v.string(), v.string()), deployedEnv);
  if (!env.success)
    drifts.push({ answers: envAnswers, unresolvable: 'a variable names no output' });
  else {
    const off = Object.entries(env.output).filter(([k, x]) => facts.environment[k] !== x);
    drifts.push({
      answers: envAnswers,
      ...(off.length === 0
        ? {}
        : {
            repair: {
              subject: fn,
              name: 'wiring',
              change: off
                .map(([k, x]) => `${k} ${facts.environment[k] ?? 'unset'} → ${x}`)
                .join('; '),
              // Variables the template does not set (a log level raised by hand) stay.
              request: {
                kind: 'environment',
                functionName,
                variables: { ...facts.environment, ...env.output },
              },
            },
          }),
    });
  }

  for (const [, mapping] of Object.entries(template.Resources)) {
    if (mapping.Type !== 'AWS::Lambda::EventSourceMapping') continue;
    const p = mapping.Properties;
    if (resolve(p.FunctionName) !== functionName) continue;
    const source = resolve(p.EventSourceArn);
    const responseTypes = v.safeParse(ResponseTypesSchema, p.FunctionResponseTypes);
    if (!responseTypes.success) continue;
    const deployed = responseTypes.output;
    // Deleted by hand: CloudFormation still lists it, so no deploy creates it again.
    if (facts.mappings.length === 0) drifts.push(createDrift(fn, functionName, source, p, resolve));
    for (const m of facts.mappings) {
      const types = m.FunctionResponseTypes ?? [];
      if (m.EventSourceArn !== source || m.UUID === undefined) continue;
      const same = types.length === deployed.length && types.every((t) => deployed.includes(t));
      drifts.push({
        answers: answers(fn, 'partial batch responses'),
        ...(same
          ? {}
          : {
              repair: {
                subject: fn,
                name: 'partial batch responses',
                change: `${m.UUID}: FunctionResponseTypes [${types.join(', ')}] → [${deployed.join(', ')}]`,
                request: { kind: 'response-types', uuid: m.UUID, functionResponseTypes: deployed },
              },
            }),
      });
    }
  }
  return drifts;
};
