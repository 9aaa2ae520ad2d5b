/**
 * The message contract, validated at the edge. Types are derived from the schemas, so the rest
 * of the code never sees an unchecked value.
 */
import * as v from 'valibot';
import { CURRENCIES, currencyExponent, MAX_CURRENCY_EXPONENT } from './currencies.ts';
import { InvalidMessageError } from './errors.ts';
import { toMinorUnits } from './money.ts';
import { hourOf, parseHour, readEventTime } from './time.ts';

export const ORDER_STATUSES = [
  'placed',
  'paid',
  'shipped',
  'delivered',
  'cancelled',
  'refunded',
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const MAX_EVENTS_PER_BATCH = 500;
/**
 * Fifteen integer digits and at most the currency's exponent (up to 4) in fraction digits: one
 * event is below 10^19 minor units, so a counter (DynamoDB numbers hold 38 digits) could only
 * overflow after 10^19 events of the largest amount.
 */
export const MAX_AMOUNT_INTEGER_DIGITS = 15;
const AMOUNT = new RegExp(
  `^(0|[1-9]\\d{0,${MAX_AMOUNT_INTEGER_DIGITS - 1}})(\\.\\d{1,${MAX_CURRENCY_EXPONENT}})?$`,
);

/** Strings must be well-formed Unicode (JSON can carry lone surrogates) and free of controls. */
const text = (max: number) =>
  v.pipe(
    v.string('must be a string'),
    v.minLength(1, 'must not be empty'),
    v.maxLength(max, `must be at most ${max} characters`),
    v.check((s) => s.isWellFormed(), 'must be well-formed Unicode'),
    // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
    v.regex(/^[^\u0000-\u001f\u007f]*$/, 'must not contain control characters'),
  );

/** An order, event or customer id: 1-128 characters of well-formed text, no control characters. */
export const EntityIdSchema = text(128);

export const BatchIdSchema = v.pipe(
  v.string('must be a string'),
  v.regex(/^[A-Za-z0-9._:/-]{1,128}$/, 'must be 1-128 characters of A-Z a-z 0-9 . _ : / -'),
);

const EventTimeSchema = v.pipe(
  v.string('must be a string'),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const result = readEventTime(dataset.value);
    if (!result.ok) {
      addIssue({ message: result.problem });
      return NEVER;
    }
    return { text: dataset.value, instant: result.instant, hour: hourOf(result.instant) };
  }),
);

const fractionDigits = (amount: string) => amount.split('.')[1]?.length ?? 0;

export const OrderEventSchema = v.pipe(
  v.strictObject(
    {
      eventId: EntityIdSchema,
      orderId: EntityIdSchema,
      customerId: EntityIdSchema,
      status: v.picklist(ORDER_STATUSES, `must be one of ${ORDER_STATUSES.join(', ')}`),
      amount: v.pipe(
        v.string('must be a decimal string such as "25.50"'),
        v.regex(
          AMOUNT,
          `must be a non-negative decimal string with at most ${MAX_AMOUNT_INTEGER_DIGITS} integer digits and the currency's fraction digits`,
        ),
      ),
      currency: v.pipe(
        v.string('must be a string'),
        v.regex(/^[A-Z]{3}$/, 'must be 3 upper-case letters'),
        v.check(
          (code) => currencyExponent(code) !== undefined,
          (issue) =>
            `${String(issue.input)} is not an active ISO 4217 currency code (${CURRENCIES.length} are supported)`,
        ),
      ),
      eventTime: EventTimeSchema,
    },
    'must be an object with only the fields of an order event',
  ),
  // The currency decides how many fraction digits an amount may carry (JPY none, KWD three).
  v.forward(
    v.partialCheck(
      [['amount'], ['currency']],
      (e) => fractionDigits(e.amount) <= (currencyExponent(e.currency) ?? 0),
      (issue) => {
        const e = issue.input as { amount: string; currency: string };
        const exponent = currencyExponent(e.currency) ?? 0;
        return `${e.amount} has more fraction digits than ${e.currency} allows (ISO 4217 exponent ${exponent})`;
      },
    ),
    ['amount'],
  ),
);

export const OrderBatchSchema = v.strictObject(
  {
    batchId: BatchIdSchema,
    source: v.optional(text(128)),
    events: v.pipe(
      v.array(OrderEventSchema, 'must be an array of order events'),
      v.minLength(1, 'must hold at least one event'),
      v.maxLength(MAX_EVENTS_PER_BATCH, `must hold at most ${MAX_EVENTS_PER_BATCH} events`),
    ),
  },
  'must be an object with batchId, events and optionally source',
);

export type OrderBatchInput = v.InferInput<typeof OrderBatchSchema>;
type ParsedBatch = v.InferOutput<typeof OrderBatchSchema>;
type ParsedEvent = ParsedBatch['events'][number];

/** An order event after validation: the original text plus the exact values derived from it. */
export interface OrderEvent {
  readonly eventId: string;
  readonly orderId: string;
  readonly customerId: string;
  readonly status: OrderStatus;
  readonly amount: string;
  readonly amountMinor: bigint;
  readonly currency: string;
  /** As sent. */
  readonly eventTime: string;
  /** Canonical UTC instant, used for newest-wins ordering. */
  readonly instant: string;
  readonly epochMs: number;
  /** UTC hour bucket, `2026-10-01T09:00:00Z`. */
  readonly hour: string;
}

export interface OrderBatch {
  readonly batchId: string;
  readonly source?: string;
  readonly events: readonly OrderEvent[];
}

const toEvent = (e: ParsedEvent): OrderEvent => ({
  eventId: e.eventId,
  orderId: e.orderId,
  customerId: e.customerId,
  status: e.status,
  amount: e.amount,
  amountMinor: toMinorUnits(e.amount, currencyExponent(e.currency) ?? 0),
  currency: e.currency,
  eventTime: e.eventTime.text,
  instant: e.eventTime.instant.canonical,
  epochMs: e.eventTime.instant.epochMs,
  hour: e.eventTime.hour,
});

export type ValidationResult =
  | { readonly ok: true; readonly batch: OrderBatch }
  | {
      readonly ok: false;
      readonly reason: 'schema-violation' | 'duplicate-event-id';
      readonly detail: string;
    };

const describeIssues = (issues: readonly v.BaseIssue<unknown>[]): string =>
  issues
    .slice(0, 5)
    .map(
      (issue) =>
        `${v.getDotPath(issue) ?? '(body)'}: ${issue.kind === 'schema' && issue.input === undefined && issue.path?.length ? 'is required' : issue.message}`,
    )
    .join('; ') + (issues.length > 5 ? `; and ${issues.length - 5} more` : '');

/** The batch id a JSON value names, when it names one the contract allows; else undefined. */
export const namedBatchId = (value: unknown): string | undefined => {
  const result = v.safeParse(v.looseObject({ batchId: BatchIdSchema }), value);
  return result.success ? result.output.batchId : undefined;
};

/** Validates a parsed JSON value against the batch contract. */
export const validateBatch = (value: unknown): ValidationResult => {
  // Valibot accepts arrays as objects; the contract wants a JSON object.
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      ok: false,
      reason: 'schema-violation',
      detail: '(body): must be a JSON object with batchId and events',
    };
  }
  const result = v.safeParse(OrderBatchSchema, value);
  if (!result.success) {
    return { ok: false, reason: 'schema-violation', detail: describeIssues(result.issues) };
  }
  const seen = new Map<string, number>();
  for (const [index, event] of result.output.events.entries()) {
    const first = seen.get(event.eventId);
    if (first !== undefined) {
      return {
        ok: false,
        reason: 'duplicate-event-id',
        detail: `events.${index}.eventId: ${event.eventId} already appears at events.${first}`,
      };
    }
    seen.set(event.eventId, index);
  }
  const { batchId, source, events } = result.output;
  return {
    ok: true,
    batch: { batchId, ...(source === undefined ? {} : { source }), events: events.map(toEvent) },
  };
};

/** The aggregate queue's message: one hour to recompute. */
export const HourMessageSchema = v.strictObject({
  hour: v.pipe(
    v.string('must be a string'),
    v.check(
      (h) => parseHour(h) !== undefined,
      'must be a whole UTC hour such as 2026-10-01T09:00:00Z',
    ),
  ),
});
export type HourMessage = v.InferOutput<typeof HourMessageSchema>;

export const describeValidationIssues = describeIssues;

/** Parses and validates a raw SQS body; throws InvalidMessageError for anything unusable. */
export const parseBatchBody = (body: string, maxBodyBytes: number): OrderBatch => {
  const bytes = Buffer.byteLength(body, 'utf8');
  if (bytes > maxBodyBytes) {
    throw new InvalidMessageError(
      'oversize',
      `body is ${bytes} bytes; the limit is ${maxBodyBytes}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    throw new InvalidMessageError('invalid-json', (error as Error).message, { cause: error });
  }
  const result = validateBatch(json);
  if (!result.ok) {
    const batchId = namedBatchId(json);
    throw new InvalidMessageError(
      result.reason,
      result.detail,
      batchId === undefined ? undefined : { namedBatchId: batchId },
    );
  }
  return result.batch;
};
