/**
 * The fault injector's faults are what they claim to be: the crash tests, the partial-read tests
 * and chaos prove the guarantees against them, so a fault that quietly does less would let a
 * proof pass on a weaker fault than the one it names. Checked against fauxqs's S3.
 */
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  paginateListObjectsV2,
  S3Client,
} from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { FaultInjector } from '../../harness/faults.ts';
import { clientConfig, uniqueName } from '../support/pipeline.ts';

const s3Config = () => ({ ...clientConfig(), forcePathStyle: true });

/** A bucket of its own holding `keys`, each with its own name as its body. */
const bucketWith = async (keys: readonly string[]) => {
  const s3 = new S3Client(s3Config());
  const Bucket = uniqueName('faults');
  await s3.send(new CreateBucketCommand({ Bucket }));
  for (const Key of keys) await s3.send(new PutObjectCommand({ Bucket, Key, Body: Key }));
  return { s3, Bucket };
};

describe('the fault injector', () => {
  it('answers a listing one key a page under short-pages, unless the caller names a page size of its own', async () => {
    const { Bucket } = await bucketWith(['a', 'b', 'c']);
    const faults = new FaultInjector().add({
      site: 'ListObjectsV2',
      kind: 'short-pages',
      times: 100,
    });
    const s3 = faults.attach(new S3Client(s3Config()));
    // Followed page by page, as the adapters' listings do.
    const pages: string[][] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket, ContinuationToken: token }));
      pages.push((page.Contents ?? []).map((o) => o.Key ?? ''));
      token = page.NextContinuationToken;
    } while (token);
    expect(pages).toEqual([['a'], ['b'], ['c']]);
    expect(faults.calls.get('ListObjectsV2')).toBe(3);
    // A page size of the caller's own is left as it is.
    const sized = await s3.send(new ListObjectsV2Command({ Bucket, MaxKeys: 2 }));
    expect(sized.Contents?.map((o) => o.Key)).toEqual(['a', 'b']);
    // The SDK's paginator names a page size even when none is given (undefined): shortened too.
    const paged: string[][] = [];
    for await (const page of paginateListObjectsV2({ client: s3 }, { Bucket }))
      paged.push((page.Contents ?? []).map((o) => o.Key ?? ''));
    expect(paged).toEqual([['a'], ['b'], ['c']]);
    expect(faults.fired).toEqual(Array(6).fill('short-pages@ListObjectsV2'));
  });

  it('withholds a stale read’s answer until released, so that it is older than a write made meanwhile', async () => {
    const { s3: writer, Bucket } = await bucketWith(['k']);
    let release = () => {};
    const faults = new FaultInjector().add({
      site: 'GetObject:k',
      kind: 'stale-read',
      release: new Promise<void>((r) => {
        release = r;
      }),
    });
    const reader = faults.attach(new S3Client(s3Config()));
    const took = faults.nextDone('GetObject:k');
    let answered = false;
    const read = reader.send(new GetObjectCommand({ Bucket, Key: 'k' })).then(async (o) => {
      answered = true;
      return o.Body?.transformToString();
    });
    await took;
    // The read has taken effect; a write made now comes after what it read.
    await writer.send(new PutObjectCommand({ Bucket, Key: 'k', Body: 'newer' }));
    expect(answered).toBe(false);
    release();
    expect(await read).toBe('k');
    expect(faults.fired).toEqual(['stale-read@GetObject:k']);
  });
});
