/**
 * Every error onceflow raises on purpose. Anything else that reaches a handler is unknown and is
 * rethrown, so the message is retried rather than silently dropped.
 */

/** Why a message was quarantined. Each value is stable: operators grep for it. */
export type RejectReason =
  | 'invalid-json'
  | 'oversize'
  | 'schema-violation'
  | 'duplicate-event-id'
  | 'batch-conflict'
  /** One event of a batch re-sent with other content; the rest of the batch applied. */
  | 'event-conflict'
  | 'beyond-retention'
  /** A batch's events of an hour already closed or final (latePolicy quarantine); the rest applied. */
  | 'too-late';

/** Reject details stay short: they are read in terminals and logs; the body is kept whole. */
export const MAX_DETAIL_CHARACTERS = 1024;

/** Cuts a detail to MAX_DETAIL_CHARACTERS code points (never inside a surrogate pair). */
export const boundDetail = (detail: string): string => {
  const points = [...detail];
  if (points.length <= MAX_DETAIL_CHARACTERS) return detail;
  return `${points.slice(0, MAX_DETAIL_CHARACTERS).join('')}… (${points.length - MAX_DETAIL_CHARACTERS} more characters; the body is kept whole)`;
};

/** The message can never succeed: it is quarantined with this reason and acknowledged. */
export class InvalidMessageError extends Error {
  override readonly name = 'InvalidMessageError';
  readonly reason: RejectReason;
  readonly detail: string;
  /**
   * The batch id a body refused whole still names validly (a schema violation elsewhere in it),
   * so its reject can be found by the producer's id.
   */
  readonly namedBatchId: string | undefined;

  constructor(
    reason: RejectReason,
    detail: string,
    options?: { cause?: unknown; namedBatchId?: string },
  ) {
    const bounded = boundDetail(detail);
    super(`${reason}: ${bounded}`, options);
    this.reason = reason;
    this.detail = bounded;
    this.namedBatchId = options?.namedBatchId;
  }
}

/** A batch id was reused with other content. Nothing of the new content was applied. */
export class BatchConflictError extends InvalidMessageError {
  readonly batchId: string;
  readonly storedDigest: string;
  readonly digest: string;

  constructor(batchId: string, storedDigest: string, digest: string) {
    super(
      'batch-conflict',
      `batch ${batchId} was first applied with digest ${storedDigest}; this content has digest ${digest}`,
    );
    this.batchId = batchId;
    this.storedDigest = storedDigest;
    this.digest = digest;
  }
}

/**
 * An order's item would pass DynamoDB's 400 KB item limit: it holds a claim for every event of
 * the order within the ledger retention. Not retried away: the message fails until it reaches
 * the DLQ, where it waits for the operator (see README, "Limits").
 */
export class OrderTooLargeError extends Error {
  override readonly name = 'OrderTooLargeError';

  constructor(orderId: string, bytes: number) {
    super(
      `order ${orderId}: its item would be ${bytes} bytes, over DynamoDB's 400 KB item limit; its event claims outgrew the item (set a ledger retention so that old claims expire)`,
    );
  }
}

/** A required setting is missing or malformed; raised once, at cold start. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * A write that must be retried by redelivering the message (the state it depends on moved
 * between our read and our write). The message fails alone; SQS retries it.
 */
export class RetryableError extends Error {
  override readonly name = 'RetryableError';
}

/** A paging cursor that is not one this version handed out (mistyped, or cut short). */
export class InvalidCursorError extends Error {
  override readonly name = 'InvalidCursorError';
}

/**
 * An object under one of onceflow's prefixes does not have the shape onceflow writes there
 * (edited or written by hand): readers name the key rather than guess at its content.
 */
export class UnexpectedObjectError extends Error {
  override readonly name = 'UnexpectedObjectError';

  constructor(key: string, problem: string, options?: ErrorOptions) {
    super(`${key}: ${problem}`, options);
  }
}
