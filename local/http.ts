/** Minimal HTTP plumbing for the edge: stream a request to an upstream and back. */
import { Agent, type IncomingMessage, request, type ServerResponse } from 'node:http';

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

/** Decides, once the upstream answered, whether the caller gets the answer or a dropped connection. */
export type AnswerHook = (status: number) => Promise<'deliver' | 'drop'>;

/** Streams `req` to `upstream` and the answer back to `res`, headers and status untouched. */
export const forward = (
  req: IncomingMessage,
  res: ServerResponse,
  upstream: string,
  onAnswer?: AnswerHook,
  /** The request body when it was already read (otherwise it is streamed from `req`). */
  body?: Buffer,
): Promise<void> =>
  new Promise((resolve) => {
    const target = new URL(upstream);
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
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          answer.once('end', () => resolve());
          answer.once('error', () => resolve());
        };
        if (!onAnswer) return deliver();
        answer.pause();
        void onAnswer(answer.statusCode ?? 502).then((decision) => {
          if (decision === 'deliver') return deliver();
          // The call took effect upstream, but its caller never hears back.
          answer.resume();
          res.socket?.destroy();
          resolve();
        });
      },
    );
    proxied.once('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`edge could not reach ${upstream}: ${error.message}`);
      resolve();
    });
    // A caller that goes away (an aborted long poll) takes its upstream request with it: else
    // the emulator would hand the next message to a caller no longer listening.
    res.once('close', () => {
      if (!res.writableFinished) proxied.destroy();
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

/** Reads a whole request body. */
export const readBodyBytes = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

export const readBody = async (req: IncomingMessage): Promise<string> =>
  (await readBodyBytes(req)).toString('utf8');
