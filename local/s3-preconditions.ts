/**
 * S3 conditional writes for an emulator that ignores them: `If-None-Match: *` and
 * `If-Match: <etag>` on PutObject, `If-Match` on DeleteObject, each emulated only when a probe
 * shows the emulator ignores it. Every write to a key is serialised
 * behind a per-key lock, the precondition is checked against the current object, and failures
 * answer as S3 does: 412 PreconditionFailed, or 404 NoSuchKey for If-Match on a missing key.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AnswerHook, forward, requestUpstream, type Upstream } from './http.ts';

const normaliseEtag = (etag: string) => etag.trim().replace(/^W\//, '').replace(/^"|"$/g, '');

const s3Error = (
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  extra = '',
) => {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message>${extra}<RequestId>onceflow-local</RequestId></Error>`,
  );
};

/** Object writes only: PUT/DELETE on /bucket/key, not multipart parts, copies or bucket calls. */
export const isObjectWrite = (req: IncomingMessage): boolean => {
  if (req.method !== 'PUT' && req.method !== 'DELETE') return false;
  const url = new URL(req.url ?? '/', 'http://edge');
  const [, bucket, ...key] = url.pathname.split('/');
  if (!bucket || key.join('/') === '') return false;
  if (url.searchParams.has('uploadId') || url.searchParams.has('partNumber')) return false;
  if (['tagging', 'acl', 'retention', 'legal-hold'].some((q) => url.searchParams.has(q)))
    return false;
  return req.headers['x-amz-copy-source'] === undefined;
};

/**
 * The header a fault injector sets on a conditional write to have the edge answer it as S3 does
 * when another conditional write to the same key is in flight. The SDK then parses a real 409
 * answer, so the whole error path is exercised, not an error object made up in-process.
 */
export const CONFLICT_FAULT_HEADER = 'x-onceflow-fault';
export const CONFLICT_FAULT = 'conditional-request-conflict';

/** Answers 409 ConditionalRequestConflict to a conditional object write that asks for it. */
export const answerInjectedConflict = (req: IncomingMessage, res: ServerResponse): boolean => {
  if (req.headers[CONFLICT_FAULT_HEADER] !== CONFLICT_FAULT || !isObjectWrite(req)) return false;
  if (req.headers['if-match'] === undefined && req.headers['if-none-match'] === undefined)
    return false;
  req.resume();
  s3Error(
    res,
    409,
    'ConditionalRequestConflict',
    'A conflicting conditional operation is currently in progress against this resource. Please try again.',
  );
  return true;
};

/** Which conditional writes the emulator ignores (each probed on its own at start). */
export interface S3PreconditionGaps {
  readonly putIfNoneMatch: boolean;
  readonly putIfMatch: boolean;
  readonly deleteIfMatch: boolean;
}

export class S3Preconditions {
  readonly #upstream: Upstream;
  readonly #gaps: S3PreconditionGaps;
  readonly #locks = new Map<string, Promise<void>>();

  constructor(upstream: Upstream, gaps: S3PreconditionGaps) {
    this.#upstream = upstream;
    this.#gaps = gaps;
  }

  /**
   * Whether any conditional write is emulated. Then every object write goes through the per-key
   * lock, so an emulated check never races a write the emulator handles itself.
   */
  get emulatesAny(): boolean {
    return this.#gaps.putIfNoneMatch || this.#gaps.putIfMatch || this.#gaps.deleteIfMatch;
  }

  async handle(req: IncomingMessage, res: ServerResponse, onAnswer?: AnswerHook): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://edge').pathname;
    const lockKey = decodeURIComponent(path);
    const previous = this.#locks.get(lockKey) ?? Promise.resolve();
    let release = () => {};
    const current = new Promise<void>((resolve) => {
      release = resolve;
    });
    const chained = previous.then(() => current);
    this.#locks.set(lockKey, chained);
    await previous;
    try {
      await this.#checkAndForward(req, res, path, onAnswer);
    } finally {
      release();
      if (this.#locks.get(lockKey) === chained) this.#locks.delete(lockKey);
    }
  }

  async #checkAndForward(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    onAnswer?: AnswerHook,
  ): Promise<void> {
    const put = req.method === 'PUT';
    // Only the conditions the emulator ignores are checked here; it answers the others itself.
    const ifMatch = (put ? this.#gaps.putIfMatch : this.#gaps.deleteIfMatch)
      ? req.headers['if-match']
      : undefined;
    const ifNoneMatch = this.#gaps.putIfNoneMatch ? req.headers['if-none-match'] : undefined;
    if (ifMatch !== undefined || ifNoneMatch !== undefined) {
      if (req.method === 'DELETE' && ifNoneMatch !== undefined) {
        return s3Error(
          res,
          501,
          'NotImplemented',
          'If-None-Match is not supported on DeleteObject',
        );
      }
      if (ifNoneMatch !== undefined && ifNoneMatch.trim() !== '*') {
        return s3Error(res, 501, 'NotImplemented', 'If-None-Match on writes only accepts *');
      }
      const head = await requestUpstream(this.#upstream.url, {
        method: 'HEAD',
        path,
        headers: { host: req.headers.host ?? '' },
      });
      const current = head.status === 200 ? head.headers.etag : undefined;
      if (head.status !== 200 && head.status !== 404) {
        return s3Error(
          res,
          503,
          'SlowDown',
          `could not read the current object (HTTP ${head.status})`,
        );
      }
      if (ifNoneMatch !== undefined && current !== undefined) {
        return s3Error(
          res,
          412,
          'PreconditionFailed',
          'At least one of the pre-conditions you specified did not hold',
          '<Condition>If-None-Match</Condition>',
        );
      }
      if (ifMatch !== undefined) {
        if (current === undefined)
          return s3Error(res, 404, 'NoSuchKey', 'The specified key does not exist.');
        if (normaliseEtag(ifMatch) !== normaliseEtag(current)) {
          return s3Error(
            res,
            412,
            'PreconditionFailed',
            'At least one of the pre-conditions you specified did not hold',
            '<Condition>If-Match</Condition>',
          );
        }
      }
    }
    await forward(req, res, this.#upstream, onAnswer);
  }
}
