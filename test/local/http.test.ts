/**
 * The edge's connections to the emulators behind it: idle ones close before an upstream would
 * close them under a request, busy ones (a long poll) stay open as long as the answer takes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { requestUpstream, UPSTREAM_IDLE_MS } from '../../local/http.ts';
import { waitFor } from '../../local/net.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';

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
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, closed };
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
