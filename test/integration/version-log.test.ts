import { describe, expect, it } from 'vitest';
import { S3Store } from '../../adapters/s3.ts';
import { VersionLog } from '../../harness/chaos/versions.ts';
import type { HourObjectBody } from '../../shared/aggregator.ts';
import { createPipeline } from '../support/pipeline.ts';

const A = '2026-10-01T10:00:00Z';
const B = '2026-10-01T11:00:00Z';

const body = (
  hour: string,
  events: number,
  lifecycle: { final?: true; amendments?: number } = {},
): HourObjectBody => ({
  hour,
  events,
  byStatus: { placed: { events, amounts: { USD: `${events}.00` } } },
  revision: events,
  computedAt: new Date().toISOString(),
  ...lifecycle,
});

/** The chaos judge's log over a fresh bucket, with the hours each read fetched. */
const logOverBucket = async () => {
  const p = await createPipeline();
  const store = new S3Store(p.admin.s3, p.bucketName);
  const fetched: string[] = [];
  const log = new VersionLog({
    listHourEtags: () => store.listHourEtags(),
    get: (hour) => {
      fetched.push(hour);
      return store.get(hour);
    },
  });
  /** Replaces an hour's object, whatever it holds. */
  const put = async (b: HourObjectBody) => {
    const stored = await store.get(b.hour);
    expect(await store.putIfUnchanged(b.hour, b, stored?.etag)).toBe(true);
  };
  return { log, fetched, put };
};

describe('the version log the chaos judge reads hour objects through', () => {
  it('fetches only the objects whose ETag changed since its last read, recording each new version', async () => {
    const { log, fetched, put } = await logOverBucket();
    await put(body(A, 1));
    await put(body(B, 1));
    await log.observe();
    expect(fetched.sort()).toEqual([A, B]);

    fetched.length = 0;
    await log.observe();
    expect(fetched).toEqual([]);

    await put(body(A, 2));
    await log.observe();
    expect(fetched).toEqual([A]);
    expect(log.versions).toBe(3);
    expect(log.violations()).toEqual([]);
  });

  it('reports an hour that was read final and later open', async () => {
    const { log, put } = await logOverBucket();
    await put(body(A, 1, { final: true }));
    await log.observe();
    await put(body(A, 1));
    await log.observe();
    expect(log.violations()).toEqual([`${A} was read final, then open`]);
  });

  it('reports a final hour whose content changed without its amendments count raised, and not one that raised it', async () => {
    const { log, put } = await logOverBucket();
    await put(body(A, 1, { final: true }));
    await log.observe();
    await put(body(A, 2, { final: true, amendments: 1 }));
    await log.observe();
    expect(log.violations()).toEqual([]);
    // Changed again, still saying one amendment: a consumer cannot tell it from the last.
    await put(body(A, 3, { final: true, amendments: 1 }));
    await log.observe();
    expect(log.violations()).toEqual([`${A} changed after it was read final, amendments still 1`]);
  });
});
