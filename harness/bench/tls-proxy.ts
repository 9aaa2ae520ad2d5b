/**
 * An HTTPS endpoint in front of the local edge, which speaks plain HTTP. On AWS every connection
 * a function opens is a TLS handshake; through this proxy a local measurement pays for them too.
 * The certificate is self-signed for 127.0.0.1, made at start with `openssl` (Node can make keys
 * but not certificates); clients trust it through `caFile` (`NODE_EXTRA_CA_CERTS`).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProcess } from '../../local/process.ts';

export interface TlsProxy {
  /** `https://127.0.0.1:<port>`. */
  readonly endpoint: string;
  /** The certificate (PEM) to trust: give it to clients as `NODE_EXTRA_CA_CERTS`. */
  readonly caFile: string;
  stop(): Promise<void>;
}

/** `openssl` is missing or failed: the TLS measurement cannot run on this machine. */
export class TlsUnavailableError extends Error {
  override readonly name = 'TlsUnavailableError';
}

const selfSignedCertificate = async (dir: string) => {
  const keyFile = join(dir, 'key.pem');
  const caFile = join(dir, 'cert.pem');
  const args = [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    keyFile,
    '-out',
    caFile,
  ];
  const made = await runProcess('openssl', args).catch((cause: unknown) => {
    throw new TlsUnavailableError('openssl is not installed: it makes the proxy’s certificate', {
      cause,
    });
  });
  if (made.code !== 0)
    throw new TlsUnavailableError(`openssl could not make a certificate: ${made.stderr.trim()}`);
  return { key: readFileSync(keyFile), cert: readFileSync(caFile), caFile };
};

/** Starts the proxy; every request goes on to `upstream` (an `http://` URL) as it came. */
export const startTlsProxy = async (upstream: string): Promise<TlsProxy> => {
  const target = new URL(upstream);
  const dir = mkdtempSync(join(tmpdir(), 'onceflow-tls-'));
  const { key, cert, caFile } = await selfSignedCertificate(dir);
  // Connections to the edge are kept, so the proxy's own hop costs no handshake of its own.
  const agent = new Agent({ keepAlive: true });
  const server = createServer({ key, cert }, (req, res) => {
    const forward = request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
        agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.once('error', (error) => {
      // Cut off mid-answer, the client sees the connection drop, as it would on AWS.
      if (res.headersSent) return res.destroy(error);
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`the TLS proxy could not reach ${upstream}: ${error.message}`);
    });
    req.pipe(forward);
  });
  // As AWS endpoints do, keep idle client connections open: a warm function reuses them.
  server.keepAliveTimeout = 10 * 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `https://127.0.0.1:${port}`,
    caFile,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
