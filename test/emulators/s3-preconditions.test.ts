import { Agent, request } from 'node:http';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { describe, expect, inject, it } from 'vitest';
import { createAdminClients, uniqueName } from '../support/pipeline.ts';

/**
 * Conditional PUTs whose headers all reach the edge before any body is sent: each asks for
 * `100 Continue`, which the edge's server answers on receiving the headers, and the bodies go
 * once every request has it. A check made before the previous write to the key landed would
 * see the key as it was: the writes race as closely as they can. (fauxqs takes them unsigned.)
 */
const simultaneousPuts = async (
  path: string,
  bodies: readonly string[],
  headers: Record<string, string>,
): Promise<number[]> => {
  const agent = new Agent({ keepAlive: true, maxSockets: bodies.length });
  try {
    const calls = bodies.map((body) => {
      const req = request(new URL(path, inject('endpoint')), {
        method: 'PUT',
        agent,
        headers: { ...headers, expect: '100-continue', 'content-length': Buffer.byteLength(body) },
      });
      const continued = new Promise<void>((resolve) => req.once('continue', resolve));
      const status = new Promise<number>((resolve, reject) => {
        req.once('response', (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.once('error', reject);
      });
      req.flushHeaders();
      return { req, body, continued, status };
    });
    await Promise.all(calls.map((c) => c.continued));
    for (const c of calls) c.req.end(c.body);
    return await Promise.all(calls.map((c) => c.status));
  } finally {
    agent.destroy();
  }
};

/** S3's documented answers to conditional writes, checked through the edge endpoint. */
describe('S3 conditional writes on the local edge', () => {
  const setup = async () => {
    const { s3 } = createAdminClients();
    const Bucket = uniqueName('cond').toLowerCase();
    await s3.send(new CreateBucketCommand({ Bucket }));
    const put = (
      Key: string,
      Body: string,
      condition: { IfNoneMatch?: string; IfMatch?: string } = {},
    ) => s3.send(new PutObjectCommand({ Bucket, Key, Body, ...condition }));
    const read = async (Key: string) =>
      (await s3.send(new GetObjectCommand({ Bucket, Key }))).Body?.transformToString();
    const status = (promise: Promise<unknown>) =>
      promise.then(
        () => 200,
        (error: { $metadata?: { httpStatusCode?: number } }) => error.$metadata?.httpStatusCode,
      );
    return { s3, Bucket, put, read, status };
  };

  it('creates with If-None-Match: * when the key is free and answers 412 when it is taken', async () => {
    const { put, read, status } = await setup();
    expect(await status(put('k', 'first', { IfNoneMatch: '*' }))).toBe(200);
    expect(await status(put('k', 'second', { IfNoneMatch: '*' }))).toBe(412);
    expect(await read('k')).toBe('first');
  });

  it('replaces with If-Match only while the ETag is current', async () => {
    const { put, read, status } = await setup();
    const first = await put('k', 'v1');
    const second = await put('k', 'v2', { IfMatch: first.ETag ?? '' });
    expect(second.ETag).not.toBe(first.ETag);
    expect(await status(put('k', 'stale', { IfMatch: first.ETag ?? '' }))).toBe(412);
    expect(await read('k')).toBe('v2');
  });

  it('answers 404 to If-Match on a key that does not exist', async () => {
    const { put, status } = await setup();
    expect(await status(put('missing', 'v', { IfMatch: '"0123"' }))).toBe(404);
  });

  it('deletes with If-Match only while the ETag is current', async () => {
    const { s3, Bucket, put, status } = await setup();
    const first = await put('k', 'v1');
    const second = await put('k', 'v2');
    expect(
      await status(
        s3.send(new DeleteObjectCommand({ Bucket, Key: 'k', IfMatch: first.ETag ?? '' })),
      ),
    ).toBe(412);
    expect(
      await status(
        s3.send(new DeleteObjectCommand({ Bucket, Key: 'k', IfMatch: second.ETag ?? '' })),
      ),
    ).toBe(200);
    expect(await status(s3.send(new GetObjectCommand({ Bucket, Key: 'k' })))).toBe(404);
  });

  it('lets exactly one of many racing create-only writes win', async () => {
    const { put, read, status } = await setup();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        status(put('race', `writer-${i}`, { IfNoneMatch: '*' })),
      ),
    );
    expect(results.filter((s) => s === 200)).toHaveLength(1);
    expect(results.filter((s) => s === 412)).toHaveLength(19);
    const winner = results.indexOf(200);
    expect(await read('race')).toBe(`writer-${winner}`);
  });

  it('lets exactly one of many racing compare-and-swap writes on the same ETag win', async () => {
    const { put, status } = await setup();
    const base = await put('cas', 'base');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        status(put('cas', `writer-${i}`, { IfMatch: base.ETag ?? '' })),
      ),
    );
    expect(results.filter((s) => s === 200)).toHaveLength(1);
  });

  it('lets one write win when many conditional writes of one key reach the edge together', async () => {
    const { put, Bucket } = await setup();
    const writers = Array.from({ length: 8 }, (_, i) => `writer-${i}`);
    const created = await simultaneousPuts(`/${Bucket}/together`, writers, {
      'if-none-match': '*',
    });
    expect(created.filter((s) => s === 200)).toHaveLength(1);
    expect(created.filter((s) => s === 412)).toHaveLength(writers.length - 1);
    const base = await put('swap', 'base');
    const swapped = await simultaneousPuts(`/${Bucket}/swap`, writers, {
      'if-match': base.ETag ?? '',
    });
    expect(swapped.filter((s) => s === 200)).toHaveLength(1);
    expect(swapped.filter((s) => s === 412)).toHaveLength(writers.length - 1);
  });
});
