/**
 * What every CloudWatch action of the local edge shares: the backend it acts on, CloudWatch's
 * errors, the input shapes several actions take, and how an action validates its input.
 */
import * as v from 'valibot';
import type { AlarmBook } from './alarm-book.ts';
import type { MetricId, MetricStore } from './metrics.ts';

export interface CloudWatchBackend {
  readonly metrics: MetricStore;
  readonly alarms: AlarmBook;
  /** Samples now the metrics read from a service's state (SQS's queue depths). */
  sample(metrics: readonly MetricId[], nowMs: number): Promise<void>;
}

/** An error as CloudWatch gives it: its shape for JSON clients, its query code for the others. */
export class CloudWatchError extends Error {
  override readonly name = 'CloudWatchError';
  readonly shape: string;
  readonly code: string;
  readonly status: number;

  constructor(shape: string, code: string, message: string, status = 400) {
    super(message);
    this.shape = shape;
    this.code = code;
    this.status = status;
  }
}

export const invalid = (message: string) =>
  new CloudWatchError('InvalidParameterValueException', 'InvalidParameterValue', message);

export const DimensionsSchema = v.optional(
  v.array(v.object({ Name: v.string(), Value: v.string() })),
  [],
);
export const Seconds = v.pipe(
  v.number(),
  v.transform((s) => s * 1000),
);
export const MaxRecords = v.optional(
  v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)),
);

export const seconds = (ms: number) => ms / 1000;

export const dimensionsOf = (list: readonly { Name: string; Value: string }[]) =>
  Object.fromEntries(list.map((d) => [d.Name, d.Value]));

export type Output = Record<string, unknown>;
export type Operation = (cw: CloudWatchBackend, body: unknown, nowMs: number) => Promise<Output>;

/** An action: its input validated by `schema`, then handled. */
export const operation =
  <S extends v.GenericSchema>(
    schema: S,
    handle: (
      cw: CloudWatchBackend,
      input: v.InferOutput<S>,
      nowMs: number,
    ) => Output | Promise<Output>,
  ): Operation =>
  async (cw, body, nowMs) => {
    const parsed = v.safeParse(schema, body);
    if (!parsed.success) throw invalid(parsed.issues.map((i) => i.message).join('; '));
    return handle(cw, parsed.output, nowMs);
  };
