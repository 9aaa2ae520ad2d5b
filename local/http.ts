/** Minimal HTTP plumbing for the edge: stream a request to an upstream and back. */
import { Agent, type IncomingMessage, request, type ServerResponse } from 'node:http';

/**
 * How long the edge keeps an idle connection to an emulator. An upstream closing an idle
 * connection races the edge's next request on it, which then fails (a 503 to the caller, retried
 * by SDKs but drawn from their retry quota): DynamoDB Local's Jetty closes after 30 s and tells no
 * one, Node servers (fauxqs) after 5 s. The edge closes first.
 */
export const UPSTREAM_IDLE_MS = 4_000;

// `timeout` closes a socket idle in the pool; one carrying a request (a 20-s long poll) only
// emits 'timeout' on it, which nothing here acts on.
const agent = new Agent({ keepAlive: true, maxSockets: 256, timeout: UPSTREAM_IDLE_MS });

/** Decides, once the upstream answered, whether the caller gets the answer or a dropped connection. */
export type AnswerHook = (status: number) => Promise<'deliver' | 'drop'>;

/** An emulator behind the edge: where it listens, and its name for error messages. */
export interface Upstream {
  readonly url: string;
  readonly name: string;
}

/**
 * Answers with an AWS-shaped error in the caller's protocol (JSON for `X-Amz-Target` calls, XML
 * otherwise), so every SDK and the AWS CLI show its message instead of failing to parse it.
 */
export const answerError = (
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
): void => {
  if (res.headersSent) {
    res.end();
    return;
  }
  if (req.headers['x-amz-target'] !== undefined) {
    res.writeHead(status, {
      'content-type': 'application/x-amz-json-1.0',
      'x-amzn-errortype': code,
    });
    res.end(JSON.stringify({ __type: code, message }));
    return;
  }
  const text = message.replace(/[<>&]/g, (c) =>
    c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&amp;',
  );
  res.writeHead(status, { 'content-type': 'text/xml' });
  res.end(
    `<?xml version="1.0" encoding="UTF-8"?>\n<ErrorResponse><Error><Type>Receiver</Type><Code>${code}</Code><Message>${text}</Message></Error><RequestId>onceflow-edge</RequestId></ErrorResponse>`,
  );
};

/** Streams `req` to `upstream` and the answer back to `res`, headers and status untouched. */
export const forward = (
  req: IncomingMessage,
  res: ServerResponse,
  upstream: Upstream,
  onAnswer?: AnswerHook,
  /** The request body when it was already read (otherwise it is streamed from `req`). */
  body?: Buffer,
  /**
   * For a long poll: when its caller leaves, the exchange still runs to its end and the answer
   * comes here. An emulator that does not cancel a long poll whose connection closed (fauxqs)
   * would otherwise hand the next message to nobody, and keep it invisible for the whole
   * visibility timeout.
   */
  orphaned?: (answer: Buffer) => void,
): Promise<void> =>
  new Promise((resolve) => {
    // The caller left before the exchange began: it waited behind an S3 key's lock or a fault
    // hook while its environment crashed. Nothing is forwarded (its request never arrived
    // whole) and nobody is answered. Forwarded, its body would never end, and neither would
    // the exchange, holding the key's lock from every later write to that key.
    if (res.closed || res.destroyed) {
      req.resume();
      return resolve();
    }
    const target = new URL(upstream.url);
    const proxied = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent,
      },
      (answer) => {
        const deliver = () => {
          // The caller left while a hook held the answer (a crash of its environment): nobody
          // to deliver to. Piped to a closed response, the answer would never end, and neither
          // would the exchange, holding what waits for it (an S3 key's lock).
          if (callerLeft) {
            if (!orphaned) answer.resume();
            else {
              const chunks: Buffer[] = [];
              answer.on('data', (chunk: Buffer) => chunks.push(chunk));
              answer.once('end', () => orphaned(Buffer.concat(chunks)));
              // Paused while a hook decided: a listener alone would not start it again.
              answer.resume();
            }
            return resolve();
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.once('end', () => resolve());
          answer.once('error', () => resolve());
          // Destroyed before its end (the caller left mid-answer): over too.
          answer.once('close', () => resolve());
        };
        if (!onAnswer) return deliver();
        answer.pause();
        // A hook that fails (synchronously or not) still ends the exchange, with an answer that
        // says so: left pending, it would hold whatever waits on the exchange (an S3 key's lock).
        Promise.resolve()
          .then(() => onAnswer(answer.statusCode ?? 502))
          .then(
            (decision) => {
              if (decision === 'deliver') return deliver();
              // The call took effect upstream, but its caller never hears back.
              answer.resume();
              res.socket?.destroy();
              resolve();
            },
            (error: unknown) => {
              answer.resume();
              if (!callerLeft)
                answerError(
                  req,
                  res,
                  500,
                  'InternalFailure',
                  `the onceflow local edge's fault hook failed after ${upstream.name} answered ${answer.statusCode ?? 502}: ${error instanceof Error ? error.message : String(error)}`,
                );
              resolve();
            },
          );
      },
    );
    proxied.once('error', (error) => {
      // The caller left first (see below): nobody to answer.
      if (callerLeft) return resolve();
      answerError(
        req,
        res,
        503,
        'ServiceUnavailable',
        `the onceflow local edge could not reach ${upstream.name} at ${upstream.url} (${error.message}): is the local runtime healthy?`,
      );
      resolve();
    });
    // A caller that goes away (an aborted long poll) takes its upstream request with it, unless
    // its answer is `orphaned`: an emulator may not notice, and hand a message to nobody.
    let callerLeft = false;
    res.once('close', () => {
      if (res.writableFinished) return;
      callerLeft = true;
      if (!orphaned) proxied.destroy();
    });
    if (body) proxied.end(body);
    else req.pipe(proxied);
  });

export interface UpstreamAnswer {
  readonly status: number;
  readonly headers: Record<string, string | undefined>;
  readonly body: string;
}

/** One request to an upstream, fully buffered (for the gap-fillers' own reads). */
export const requestUpstream = (
  upstream: string,
  options: { method: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<UpstreamAnswer> =>
  new Promise((resolve, reject) => {
    const target = new URL(upstream);
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        method: options.method,
        path: options.path,
        headers: options.headers,
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('end', () => {
          const headers: Record<string, string | undefined> = {};
          for (const [k, v] of Object.entries(res.headers))
            headers[k] = Array.isArray(v) ? v.join(',') : v;
          resolve({
            status: res.statusCode ?? 0,
            headers,
            body: Buffer.concat(chunks).toString('utf8'),
          });
        });
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(options.body);
  });

export class BodyTooLargeError extends Error {
  override readonly name = 'BodyTooLargeError';
}

/** Reads a whole request body, refusing (and no longer reading) one above `limit` bytes. */
export const readBodyBytes = async (
  req: IncomingMessage,
  limit = Number.POSITIVE_INFINITY,
): Promise<Buffer> => {
  const declared = Number(req.headers['content-length'] ?? 0);
  const tooLarge = () =>
    new BodyTooLargeError(`request body above the edge's limit of ${limit} bytes`);
  if (declared > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
};

export const readBody = async (req: IncomingMessage): Promise<string> =>
  (await readBodyBytes(req)).toString('utf8');

/** An answer of a JSON 1.1 protocol service (CloudWatch Logs, EventBridge). */
export const answerJson11 = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
  res.end(JSON.stringify(body));
};

/** A JSON 1.1 protocol service's error: its type in the header and the body, as SDKs read it. */
export const failJson11 = (res: ServerResponse, status: number, type: string, message: string) => {
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-errortype': type });
  res.end(JSON.stringify({ __type: type, message }));
};

/** A request's JSON body (an empty body reads as `{}`), or undefined when it is not JSON. */
export const readJsonBody = async (
  req: IncomingMessage,
): Promise<{ value: unknown } | undefined> => {
  const body = await readBody(req);
  try {
    return { value: body === '' ? {} : JSON.parse(body) };
  } catch {
    return undefined;
  }
};

/** A service the edge does not serve: an error naming it, never another service's answer. */
export const refuseService = (
  res: ServerResponse,
  service: string,
  served: ReadonlySet<string>,
) => {
  res.writeHead(400, {
    'content-type': 'application/json',
    'x-amzn-errortype': 'UnknownOperationException',
  });
  res.end(
    JSON.stringify({
      __type: 'UnknownOperationException',
      message: `the onceflow local edge does not serve ${service}; it serves ${[...served].join(', ')}`,
    }),
  );
};
