/**
 * Fault injection through AWS SDK middleware: crash before or after a call, throttling and
 * transaction conflicts. Nothing in the functions knows about it; the clients they are given
 * simply carry this middleware.
 */
import {
  ProvisionedThroughputExceededException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import type {
  BuildHandlerOptions,
  BuildMiddleware,
  InitializeHandlerOptions,
  InitializeMiddleware,
  MetadataBearer,
} from '@smithy/types';
import { CONFLICT_FAULT, CONFLICT_FAULT_HEADER } from '../local/s3-preconditions.ts';

/**
 * `throttle`: DynamoDB's ProvisionedThroughputExceededException; `throttling`: the generic
 * ThrottlingException other services (and DynamoDB's control plane) answer.
 */
export type FaultKind =
  | 'crash-before'
  | 'crash-after'
  | 'throttle'
  | 'throttling'
  | 'transaction-conflict'
  /** S3's 409 ConditionalRequestConflict, answered by the local edge (conditional writes only). */
  | 's3-conflict'
  /** A slow dependency: the call waits for the rule's `release`, then proceeds. */
  | 'hold'
  /**
   * A slow answer: the call is made at once and its answer withheld until the rule's `release`,
   * so that what it read is older than what others wrote meanwhile.
   */
  | 'stale-read'
  /**
   * SQS failing one entry of a `SendMessageBatch` through no fault of the sender (`InternalError`,
   * `SenderFault: false`): the first entry is not sent and is reported in `Failed`; the others are.
   */
  | 'entry-failure'
  /**
   * DynamoDB answering part of a `BatchGetItem` (a response past 16 MB, a throttled partition):
   * the first half of each table's keys read, the rest returned in `UnprocessedKeys`, for the
   * caller to ask again. DynamoDB Local never does it.
   */
  | 'unprocessed-keys'
  /**
   * DynamoDB's `Query` and `Scan` and S3's `ListObjectsV2` answering one item a page (as they do
   * at 1 MB or 1,000 keys, which a test's data never reaches), for the caller to follow the
   * page's continuation. Only calls that set no page size of their own.
   */
  | 'short-pages';

/** A call site: the command plus what it writes (`UpdateItem:order`, `PutObject:raw`, …). */
export const callSite = (command: string, input: unknown): string => {
  const i = (typeof input === 'object' && input ? input : {}) as Record<string, unknown>;
  const name = command.replace(/Command$/, '');
  if (name === 'PutItem') {
    const item = i.Item as Record<string, { S?: string }> | undefined;
    return `PutItem:${item?.kind?.S ?? 'other'}`;
  }
  if (name === 'UpdateItem') {
    // Order writes set their kind; other updates (a baseline's) keep the bare name.
    const kind = (i.ExpressionAttributeValues as Record<string, { S?: string }> | undefined)?.[
      ':kind'
    ]?.S;
    return kind ? `UpdateItem:${kind}` : 'UpdateItem';
  }
  if (name === 'PutObject' || name === 'DeleteObject' || name === 'GetObject') {
    const key = typeof i.Key === 'string' ? i.Key : '';
    return `${name}:${key.split('/')[0] ?? ''}`;
  }
  return name;
};

/** Every call site of the two functions that changes state. */
export const SIDE_EFFECT_SITES = [
  'PutItem:batch',
  'PutObject:raw',
  'PutObject:arrivals',
  'UpdateItem:order',
  'TransactWriteItems',
  'SendMessageBatch',
  'PutObject:rejects',
  'PutObject:aggregates',
  'DeleteObject:aggregates',
] as const;

export interface FaultRule {
  readonly site: string;
  readonly kind: FaultKind;
  /** Fire on the nth matching call (1-based) and the ones after it, `times` times. Default 1. */
  readonly nth?: number;
  readonly times?: number;
  /** Only calls whose input matches. */
  readonly when?: (input: unknown) => boolean;
  /** `hold` and `stale-read`: what the call, or its answer, waits for (a function: each time). */
  readonly release?: Promise<unknown> | (() => Promise<unknown>);
}

/** The generic throttling error, shaped as the SDK shapes service errors. */
export class ThrottlingException extends Error {
  override readonly name = 'ThrottlingException';
  readonly $fault = 'client';
  readonly $metadata = { httpStatusCode: 400 };
  readonly $retryable = { throttling: true };
}

export class InjectedCrash extends Error {
  override readonly name = 'InjectedCrash';
}

interface ActiveRule extends FaultRule {
  seen: number;
  fired: number;
}

type AnyClient = {
  middlewareStack: {
    add(
      mw: InitializeMiddleware<object, MetadataBearer>,
      options: InitializeHandlerOptions & { name: string; override?: boolean },
    ): void;
    add(
      mw: BuildMiddleware<object, MetadataBearer>,
      options: BuildHandlerOptions & { name: string; override?: boolean },
    ): void;
  };
};

/** Marks a call's context so the build step asks the edge for a 409 on the wire. */
const WANTS_CONFLICT = Symbol('onceflowConflict');

const faultError = (kind: FaultKind, site: string): Error => {
  switch (kind) {
    case 'throttling':
      return new ThrottlingException(`injected ThrottlingException at ${site}`);
    case 'throttle':
      return new ProvisionedThroughputExceededException({
        message: `injected throttle at ${site}`,
        $metadata: {},
      });
    case 'transaction-conflict':
      return new TransactionCanceledException({
        message: `injected conflict at ${site}`,
        $metadata: {},
        CancellationReasons: [
          { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' },
        ],
      });
    default:
      return new InjectedCrash(`injected ${kind} at ${site}`);
  }
};

interface BatchEntries {
  readonly Entries?: readonly { readonly Id?: string }[];
}

interface BatchResult {
  Successful?: unknown[];
  Failed?: { Id?: string; Code?: string; SenderFault?: boolean; Message?: string }[];
}

/**
 * Sends a batch without its first entry and reports that one failed, as SQS does when an entry
 * fails on its side. A batch of one is answered without a request (SQS takes no empty batch).
 */
const withFirstEntryFailed = async (
  args: { input: object },
  next: (args: { input: object }) => Promise<{ output: MetadataBearer; response: unknown }>,
) => {
  const { Entries = [] } = args.input as BatchEntries;
  const [first, ...rest] = Entries;
  const failed = {
    Id: first?.Id,
    Code: 'InternalError',
    SenderFault: false,
    Message: 'injected entry failure',
  };
  if (rest.length === 0) {
    const output: MetadataBearer & BatchResult = {
      $metadata: { httpStatusCode: 200 },
      Successful: [],
      Failed: [failed],
    };
    return { output, response: {} };
  }
  const answer = await next({ ...args, input: { ...args.input, Entries: rest } });
  const output = answer.output as MetadataBearer & BatchResult;
  output.Failed = [...(output.Failed ?? []), failed];
  return answer;
};

interface BatchGetInput {
  readonly RequestItems?: Record<string, { readonly Keys?: readonly unknown[] }>;
}

/**
 * The input of a paged call asking one item a page, unless it sets its own page size. The SDK's
 * paginators name the page size even when none is given (`Limit: undefined`): theirs are
 * shortened too (the pending index is read through one).
 */
const withShortPages = (input: object): object => {
  const { Limit, MaxKeys } = input as { Limit?: unknown; MaxKeys?: unknown };
  if (Limit !== undefined || MaxKeys !== undefined) return input;
  return 'Bucket' in input ? { ...input, MaxKeys: 1 } : { ...input, Limit: 1 };
};

/** Reads the first half of each table's keys and returns the rest unprocessed, as DynamoDB may. */
const withKeysUnprocessed = async (
  args: { input: object },
  next: (args: { input: object }) => Promise<{ output: MetadataBearer; response: unknown }>,
) => {
  const { RequestItems = {} } = args.input as BatchGetInput;
  const read: Record<string, object> = {};
  const unprocessed: Record<string, object> = {};
  for (const [table, request] of Object.entries(RequestItems)) {
    const keys = request.Keys ?? [];
    const half = Math.ceil(keys.length / 2);
    read[table] = { ...request, Keys: keys.slice(0, half) };
    if (keys.length > half) unprocessed[table] = { ...request, Keys: keys.slice(half) };
  }
  const answer = await next({ ...args, input: { ...args.input, RequestItems: read } });
  if (Object.keys(unprocessed).length > 0)
    (answer.output as { UnprocessedKeys?: object }).UnprocessedKeys = unprocessed;
  return answer;
};

const released = (rule: FaultRule): Promise<unknown> | undefined =>
  typeof rule.release === 'function' ? rule.release() : rule.release;

export class FaultInjector {
  readonly #rules: ActiveRule[] = [];
  /** Every call seen, by site: what tests and chaos use to tell which points were exercised. */
  readonly calls = new Map<string, number>();
  /** Every fault fired, as `kind@site`. */
  readonly fired: string[] = [];
  /**
   * Every call's start (`site`) and successful end (`site done`), in the order they happened:
   * what tests use to tell which calls overlapped.
   */
  readonly trace: string[] = [];
  readonly #waiters: { readonly site: string; readonly called: () => void }[] = [];
  readonly #doneWaiters: { readonly site: string; readonly done: () => void }[] = [];

  add(rule: FaultRule): this {
    this.#rules.push({ ...rule, seen: 0, fired: 0 });
    return this;
  }

  clear(): void {
    this.#rules.length = 0;
  }

  /** Resolves when `site` is next called (before the call is made). */
  nextCall(site: string): Promise<void> {
    return new Promise((called) => this.#waiters.push({ site, called }));
  }

  /** Resolves when a call of `site` next ends with an answer (after it took effect). */
  nextDone(site: string): Promise<void> {
    return new Promise((done) => this.#doneWaiters.push({ site, done }));
  }

  /** Adds the middleware to a client; it runs before the SDK's own retries. */
  attach<T extends AnyClient>(client: T): T {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const site = callSite(context.commandName ?? 'unknown', args.input);
        this.calls.set(site, (this.calls.get(site) ?? 0) + 1);
        this.trace.push(site);
        for (const waiter of this.#waiters.filter((w) => w.site === site)) {
          this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
          waiter.called();
        }
        const rule = this.#match(site, args.input);
        if (rule?.kind === 's3-conflict') {
          this.fired.push(`${rule.kind}@${site}`);
          (context as Record<symbol, unknown>)[WANTS_CONFLICT] = true;
          return next(args);
        }
        if (rule?.kind === 'hold') {
          this.fired.push(`${rule.kind}@${site}`);
          await released(rule);
        } else if (rule?.kind === 'entry-failure' || rule?.kind === 'unprocessed-keys') {
          this.fired.push(`${rule.kind}@${site}`);
        } else if (rule?.kind === 'short-pages') {
          const shortened = withShortPages(args.input);
          // Fired only where it shortens a page: a caller's own page size is left as it is.
          if (shortened !== args.input) this.fired.push(`${rule.kind}@${site}`);
          args.input = shortened;
        } else if (rule && rule.kind !== 'crash-after' && rule.kind !== 'stale-read') {
          this.fired.push(`${rule.kind}@${site}`);
          throw faultError(rule.kind, site);
        }
        // An answered call, partly failed or not: its end is traced like any other's.
        const output =
          rule?.kind === 'entry-failure'
            ? await withFirstEntryFailed(args, next)
            : rule?.kind === 'unprocessed-keys'
              ? await withKeysUnprocessed(args, next)
              : await next(args);
        if (rule?.kind === 'crash-after') {
          this.fired.push(`${rule.kind}@${site}`);
          throw faultError(rule.kind, site);
        }
        this.trace.push(`${site} done`);
        for (const waiter of this.#doneWaiters.filter((w) => w.site === site)) {
          this.#doneWaiters.splice(this.#doneWaiters.indexOf(waiter), 1);
          waiter.done();
        }
        if (rule?.kind === 'stale-read') {
          this.fired.push(`${rule.kind}@${site}`);
          await released(rule);
        }
        return output;
      },
      { step: 'initialize', name: 'onceflowFaults', override: true },
    );
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const request = args.request as { headers?: Record<string, string> };
        if ((context as Record<symbol, unknown>)[WANTS_CONFLICT] && request.headers) {
          request.headers[CONFLICT_FAULT_HEADER] = CONFLICT_FAULT;
        }
        return next(args);
      },
      { step: 'build', name: 'onceflowConflictFaults', override: true },
    );
    return client;
  }

  #match(site: string, input: unknown): ActiveRule | undefined {
    for (const rule of this.#rules) {
      if (rule.site !== site || (rule.when && !rule.when(input))) continue;
      rule.seen++;
      if (rule.seen >= (rule.nth ?? 1) && rule.fired < (rule.times ?? 1)) {
        rule.fired++;
        return rule;
      }
    }
    return undefined;
  }
}
