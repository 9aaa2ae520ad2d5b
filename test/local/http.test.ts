/**
 * The edge's connections to the emulators behind it: idle ones close before an upstream would
 * close them under a request, busy ones (a long poll) stay open as long as the answer takes, and
 * an exchange ends when its caller leaves, whatever stage it is at (before it began included).
 */
import { once } from 'node:events';
import {
  type ClientRequest,
  createServer,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { forward, requestUpstream, UPSTREAM_IDLE_MS } from '../../local/http.ts';
import { waitFor } from '../../local/net.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { listenLocally } from '../support/servers.ts';

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

/** An upstream that keeps idle connections for ten minutes and answers after `delayMs`. */
const upstream = async (delayMs: number) => {
  const closed: number[] = [];
  server = createServer((_, res) => {
    setTimeout(() => res.end('ok'), delayMs);
  });
  server.keepAliveTimeout = 10 * 60_000;
  server.on('connection', (socket) => socket.once('close', () => closed.push(Date.now())));
  const { url } = await listenLocally(server);
  return { url, closed };
};

describe('the edge’s connections to an emulator', () => {
  it('closes an idle connection itself, long before the upstream would', async () => {
    const { url, closed } = await upstream(0);
    const answer = await requestUpstream(url, { method: 'GET', path: '/' });
    expect(answer.status).toBe(200);
    // The upstream keeps it ten minutes: a close within the deadline is the edge's.
    await waitFor(() => closed.length === 1, {
      timeoutMs: DEADLINE_MS,
      what: 'the edge to close its idle connection',
    });
  });

  it('keeps a connection open for an answer slower than the idle timeout', async () => {
    const { url, closed } = await upstream(UPSTREAM_IDLE_MS + 1_000);
    const answer = await requestUpstream(url, { method: 'GET', path: '/' });
    expect(answer).toMatchObject({ status: 200, body: 'ok' });
    expect(closed).toEqual([]);
  });
});

/** An edge in front of `url` whose exchanges go through `forward` with `hook`. */
const edgeWith = async (url: string, hook: Parameters<typeof forward>[3]) => {
  const exchanges: Promise<void>[] = [];
  const edge = createServer((req, res) => {
    exchanges.push(forward(req, res, { url, name: 'upstream' }, hook));
  });
  const { port } = await listenLocally(edge);
  return {
    port,
    exchanges,
    close: async () => {
      edge.closeAllConnections();
      await new Promise((resolve) => edge.close(resolve));
    },
  };
};

/** One request through an edge, its answer read whole (an error if none comes in the deadline). */
const call = async (port: number) => {
  const caller = request({ host: '127.0.0.1', port, method: 'PUT', path: '/bucket/key' });
  caller.setTimeout(DEADLINE_MS, () => caller.destroy(new Error('no answer within the deadline')));
  caller.end('body');
  const [answer] = (await once(caller, 'response')) as [IncomingMessage];
  let body = '';
  for await (const chunk of answer) body += String(chunk);
  return { status: answer.statusCode, body };
};

describe('an exchange through the edge whose fault hook fails', () => {
  it.each([
    ['rejects', async () => Promise.reject(new Error('hook broke'))],
    [
      'throws before it returns',
      (() => {
        throw new Error('hook broke');
      }) as unknown as Parameters<typeof forward>[3],
    ],
  ])('answers 500 naming the failure and ends when the hook %s', async (_, hook) => {
    const { url } = await upstream(0);
    const edge = await edgeWith(url, hook);
    try {
      const answer = await call(edge.port);
      expect(answer.status).toBe(500);
      expect(answer.body).toContain(
        "the onceflow local edge's fault hook failed after upstream answered 200: hook broke",
      );
      await Promise.all(edge.exchanges);
    } finally {
      await edge.close();
    }
  });
});

/**
 * An exchange the edge begins with `begin`, whose caller sends with `send` and leaves once
 * `begin` says it may: whether the exchange then ends within the deadline (an S3 key's lock is
 * held until it does).
 */
const endsWhenCallerLeaves = async (
  begin: (req: IncomingMessage, res: ServerResponse, leave: () => void) => Promise<void>,
  send: (caller: ClientRequest) => void,
) => {
  let leave = () => {};
  const leaving = new Promise<void>((resolve) => {
    leave = resolve;
  });
  let exchange: Promise<void> | undefined;
  const edge = createServer((req, res) => {
    exchange = begin(req, res, leave);
  });
  const { port } = await listenLocally(edge);
  try {
    const caller = request({ host: '127.0.0.1', port, method: 'PUT', path: '/bucket/key' });
    caller.on('error', () => {});
    send(caller);
    await leaving;
    caller.destroy();
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      exchange?.then(() => 'ended'),
      new Promise((resolve) => {
        timer = setTimeout(() => resolve('still open'), DEADLINE_MS);
      }),
    ]);
    clearTimeout(timer);
    return outcome;
  } finally {
    edge.closeAllConnections();
    await new Promise((resolve) => edge.close(resolve));
  }
};

describe('an exchange through the edge whose caller leaves', () => {
  it('ends when the caller leaves while a hook holds the answer, as a crash of its environment does', async () => {
    const { url } = await upstream(0);
    const outcome = await endsWhenCallerLeaves(
      // The fault hooks hold an answer while they crash the environment that made another call;
      // this call's caller (in the same environment) leaves meanwhile. Then the hook delivers.
      (req, res, leave) =>
        forward(req, res, { url, name: 'upstream' }, async () => {
          leave();
          if (!res.closed) await once(res, 'close');
          return 'deliver';
        }),
      (caller) => caller.end('body'),
    );
    expect(outcome).toBe('ended');
  });

  it('ends when the caller left before it began, as a call queued behind a key’s lock does when its environment crashes', async () => {
    // An upstream that answers once it has the whole body, as an emulator does.
    server = createServer((req, res) => {
      req.resume();
      req.once('end', () => res.end('ok'));
    });
    const { url } = await listenLocally(server);
    const outcome = await endsWhenCallerLeaves(
      // Queued (behind an S3 key's lock): the exchange begins once its caller has gone.
      async (req, res, leave) => {
        leave();
        if (!res.closed) await once(res, 'close');
        return forward(req, res, { url, name: 'upstream' });
      },
      // Half a body, then the environment dies.
      (caller) => caller.write('part of a body'),
    );
    expect(outcome).toBe('ended');
  });
});
