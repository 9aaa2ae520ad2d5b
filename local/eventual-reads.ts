/**
 * DynamoDB's eventually consistent reads, which DynamoDB Local answers as if they were
 * consistent. On AWS a read without `ConsistentRead: true` (and every read of a global secondary
 * index) may come from a replica that has not yet seen the latest writes: "usually within a
 * second", says the developer guide. Answered always fresh, a read that should have asked for
 * consistency passes every local test and serves stale state on AWS; an aggregator reading an
 * hour's counters that way would publish an hour without its latest batch, and nothing would
 * notify it again.
 *
 * The edge plays a lagging replica: an eventually consistent read gets the answer an identical
 * read got up to `lagMs` ago, when there was one, and only then a fresh one. That is the
 * staleness DynamoDB allows (state as of a moment within the lag), in its most telling form: a
 * read repeated after a write, the pattern of a recompute or a retry.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import {
  type AnswerHook,
  answerError,
  forward,
  readBodyBytes,
  requestUpstream,
  type Upstream,
} from './http.ts';

/** The reads whose consistency the caller chooses (or, on an index, cannot have). */
const READ_ACTIONS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan']);

/** What decides a read's consistency; the rest of the request is DynamoDB Local's to judge. */
const ReadRequestSchema = v.looseObject({
  ConsistentRead: v.optional(v.unknown()),
  IndexName: v.optional(v.unknown()),
  RequestItems: v.optional(
    v.record(v.string(), v.looseObject({ ConsistentRead: v.optional(v.unknown()) })),
  ),
});

/**
 * Whether DynamoDB may answer this request from a lagging replica: a read that does not ask for
 * consistency, or reads an index (a global one is never consistent; asking is an error). A body
 * that is not a read request is not: DynamoDB Local answers it (with its error).
 */
export const isEventualRead = (action: string, body: string): boolean => {
  if (!READ_ACTIONS.has(action)) return false;
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return false;
  }
  // An array is an object to the schema, and no request.
  const parsed = v.safeParse(ReadRequestSchema, json);
  if (!parsed.success || Array.isArray(json)) return false;
  const request = parsed.output;
  if (action === 'BatchGetItem')
    return Object.values(request.RequestItems ?? {}).some((t) => t.ConsistentRead !== true);
  return request.IndexName !== undefined || request.ConsistentRead !== true;
};

/** The largest read request the edge buffers (DynamoDB's own limit on a request is 16 MB). */
const MAX_READ_BODY_BYTES = 16 * 1024 * 1024;

/** Headers about the connection, not the answer: a kept answer is written whole, with its length. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length']);

interface KeptAnswer {
  readonly at: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** The caller's account and region (DynamoDB Local keeps a database per pair), from its signature. */
const credentialScope = (req: IncomingMessage): string =>
  /Credential=([^/]+)\/\d{8}\/([^/]+)\//
    .exec(req.headers.authorization ?? '')
    ?.slice(1)
    .join('/') ?? '';

/** The lag the edge plays by default: the second within which, AWS says, replicas usually agree. */
export const DEFAULT_READ_LAG_MS = 1000;

export interface LaggingReadsOptions {
  /** How old an eventually consistent read's answer may be, in ms; 0 answers every read fresh. */
  readonly lagMs: number;
  /** The clock (tests). Default `Date.now`. */
  readonly now?: () => number;
}

/** DynamoDB's eventually consistent reads, played by the edge in front of DynamoDB Local. */
export class LaggingReads {
  readonly lagMs: number;
  readonly #now: () => number;
  /** The answers that may still be served, oldest first (each kept `lagMs`). */
  readonly #kept = new Map<string, KeptAnswer>();
  /** Eventually consistent reads answered with an earlier answer (for tests and diagnostics). */
  staleAnswers = 0;

  constructor(options: LaggingReadsOptions) {
    if (!Number.isFinite(options.lagMs) || options.lagMs < 0)
      throw new RangeError(`lagMs ${options.lagMs}: give a number of milliseconds, 0 or more`);
    this.lagMs = options.lagMs;
    this.#now = options.now ?? Date.now;
  }

  /** Whether this DynamoDB action may be answered from the past (its body decides the rest). */
  mayLag(action: string): boolean {
    return this.lagMs > 0 && READ_ACTIONS.has(action);
  }

  /** Answers a DynamoDB read: an earlier answer when it may, else DynamoDB Local's. */
  async handle(
    req: IncomingMessage,
    res: ServerResponse,
    upstream: Upstream,
    action: string,
    onAnswer?: AnswerHook,
  ): Promise<void> {
    const bytes = await readBodyBytes(req, MAX_READ_BODY_BYTES);
    const body = bytes.toString('utf8');
    if (!isEventualRead(action, body)) return forward(req, res, upstream, onAnswer, bytes);
    const key = `${credentialScope(req)}\n${action}\n${body}`;
    const now = this.#now();
    this.#forgetBefore(now - this.lagMs);
    // Kept in the order they arrived, not the order they were asked: one asked earlier than an
    // answer still kept may have outlived the lag.
    let answer = this.#kept.get(key);
    if (answer && answer.at <= now - this.lagMs) {
      this.#kept.delete(key);
      answer = undefined;
    }
    if (answer) this.staleAnswers++;
    else {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers))
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
      let fresh: Awaited<ReturnType<typeof requestUpstream>>;
      try {
        fresh = await requestUpstream(upstream.url, {
          method: req.method ?? 'POST',
          path: req.url ?? '/',
          headers,
          body,
        });
      } catch (error) {
        return answerError(
          req,
          res,
          503,
          'ServiceUnavailable',
          `the onceflow local edge could not reach ${upstream.name} at ${upstream.url} (${(error as Error).message}): is the local runtime healthy?`,
        );
      }
      const kept: Record<string, string> = {};
      for (const [name, value] of Object.entries(fresh.headers))
        if (value !== undefined && !HOP_HEADERS.has(name)) kept[name] = value;
      answer = { at: now, headers: kept, body: fresh.body };
      // Only a success is state a replica could hold; an error is the caller's, each time.
      if (fresh.status === 200) this.#kept.set(key, answer);
      else return this.#deliver(res, fresh.status, answer, onAnswer);
    }
    return this.#deliver(res, 200, answer, onAnswer);
  }

  async #deliver(
    res: ServerResponse,
    status: number,
    answer: KeptAnswer,
    onAnswer?: AnswerHook,
  ): Promise<void> {
    if (onAnswer && (await onAnswer(status)) === 'drop') {
      res.socket?.destroy();
      return;
    }
    res.writeHead(status, {
      ...answer.headers,
      'content-length': String(Buffer.byteLength(answer.body)),
    });
    res.end(answer.body);
  }

  /** Drops the answers no replica could still give, from the oldest kept to the first that can. */
  #forgetBefore(cutoff: number): void {
    for (const [key, answer] of this.#kept) {
      if (answer.at > cutoff) break;
      this.#kept.delete(key);
    }
  }
}
