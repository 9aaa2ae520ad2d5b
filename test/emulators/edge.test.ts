import { request } from 'node:http';
import { describe, expect, inject, it } from 'vitest';

/** The edge itself: what it refuses before any emulator sees it. */
describe('the local edge', () => {
  it('refuses a form-encoded body above 16 MiB with 413 without reading it all', async () => {
    const endpoint = new URL(inject('endpoint'));
    const size = 17 * 1024 * 1024;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: endpoint.hostname,
          port: endpoint.port,
          method: 'POST',
          path: '/',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            'content-length': String(size),
          },
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => {
            body += c.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      // The declared length alone is refused: the edge answers before the body is sent.
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(answer.status).toBe(413);
    expect(answer.body).toContain('<Code>RequestEntityTooLarge</Code>');
  });
});
