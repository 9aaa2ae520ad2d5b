/**
 * The quarantine is read by key first: `status` counts rejects by reason and `rejects --reason
 * --since` selects them without reading every object, on a real S3 API (fauxqs).
 */
import { CreateBucketCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { S3Store } from '../../adapters/s3.ts';
import { countRejectsByReason, readRejects } from '../../adapters/s3-quarantine.ts';
import type { RejectReason } from '../../shared/errors.ts';
import type { Reject } from '../../shared/ingest.ts';
import { batchPartRejectId } from '../../shared/keys.ts';
import { createAdminClients, uniqueName } from '../support/pipeline.ts';

/** The keys each GetObject read, and what each ListObjectsV2 listed. */
const recordReads = (client: S3Client) => {
  const reads: string[] = [];
  const listings: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: string; Prefix?: string; StartAfter?: string };
      if (context.commandName === 'GetObjectCommand') reads.push(input.Key ?? '');
      if (context.commandName === 'ListObjectsV2Command')
        listings.push(`${input.Prefix}${input.StartAfter ? ` after ${input.StartAfter}` : ''}`);
      return next(args);
    },
    { step: 'initialize', name: 'recordReads' },
  );
  return { reads, listings };
};

const reject = (
  messageId: string,
  reason: RejectReason,
  sentAt: string,
  extra: Partial<Reject> = {},
): Reject => ({
  source: 'ingest',
  messageId,
  sentAtMs: Date.parse(sentAt),
  reason,
  detail: `${reason} of ${messageId}`,
  body: `{"batchId": "${messageId}"`,
  ...extra,
});

/**
 * A bucket holding rejects of both sources, three reasons and three days, and one in the earlier
 * layout.
 */
const quarantine = async () => {
  const { s3 } = createAdminClients();
  const Bucket = uniqueName('rejects').toLowerCase();
  await s3.send(new CreateBucketCommand({ Bucket }));
  const store = new S3Store(s3, Bucket);
  const rejects = [
    reject('m-3', 'invalid-json', '2026-10-03T00:00:01Z'),
    // A body refused whole that names the batch whose event conflicts come below.
    reject('m-1', 'schema-violation', '2026-10-01T23:59:59Z', { batchId: 'b-5' }),
    reject('m-2', 'schema-violation', '2026-10-02T08:00:00Z'),
    reject('m-4', 'schema-violation', '2026-10-03T09:00:00Z'),
    reject('a-1', 'schema-violation', '2026-10-02T09:00:00Z', { source: 'aggregate' }),
    // Several rejects of one message, named by batch and event, slashes included.
    reject('m-5', 'event-conflict', '2026-10-02T12:00:00Z', {
      id: batchPartRejectId('b-5', 'event-conflict', 'a1'),
      batchId: 'b-5',
    }),
    reject('m-5', 'event-conflict', '2026-10-02T12:00:00Z', {
      id: batchPartRejectId('b-5', 'event-conflict', 'b2'),
      batchId: 'b-5',
    }),
    // Another batch's parts, one of them a batch whose id starts with the first's.
    reject('m-6', 'event-conflict', '2026-10-02T13:00:00Z', {
      id: batchPartRejectId('b-5/too-late/x', 'event-conflict', 'c3'),
      batchId: 'b-5/too-late/x',
    }),
    reject('m-7', 'too-late', '2026-10-02T14:00:00Z', {
      id: batchPartRejectId('b-6', 'too-late', '2026-10-01T09:00:00Z'),
      batchId: 'b-6',
    }),
  ];
  for (const r of rejects) await store.put(r);
  // As the quarantine wrote it before the reason was part of the key.
  const legacyKey = 'rejects/ingest/date=2026-10-02/m-0.json';
  await s3.send(
    new PutObjectCommand({
      Bucket,
      Key: legacyKey,
      Body: JSON.stringify({
        source: 'ingest',
        sentAt: '2026-10-02T06:00:00.000Z',
        reason: 'oversize',
        detail: 'too large',
        messageId: 'm-0',
        body: 'x',
      }),
    }),
  );
  return { store, ...recordReads(s3), legacyKey };
};

describe('reading the quarantine', () => {
  it('counts rejects by reason from their keys, reading only an object whose key lacks it', async () => {
    const { store, reads, legacyKey } = await quarantine();
    expect(await countRejectsByReason(store)).toEqual({
      'event-conflict': 3,
      'invalid-json': 1,
      oversize: 1,
      'schema-violation': 4,
      'too-late': 1,
    });
    expect(reads).toEqual([legacyKey]);
  });

  it('lists and reads only the objects of the reason and days asked for, and returns them in the order they were sent', async () => {
    const { store, reads, listings, legacyKey } = await quarantine();
    const since = Date.parse('2026-10-02T07:00:00Z');
    const selected = await readRejects(store, { reason: 'schema-violation', sinceMs: since });
    expect(selected.map((r) => r.messageId)).toEqual(['m-2', 'a-1', 'm-4']);
    // The sources, then per source that reason's keys and the keys without a reason, each from
    // the day asked for: the other reasons are not even listed.
    expect([...listings].sort()).toEqual([
      'rejects/',
      'rejects/aggregate/date= after rejects/aggregate/date=2026-10-02',
      'rejects/aggregate/reason=schema-violation/date= after rejects/aggregate/reason=schema-violation/date=2026-10-02',
      'rejects/ingest/date= after rejects/ingest/date=2026-10-02',
      'rejects/ingest/reason=schema-violation/date= after rejects/ingest/reason=schema-violation/date=2026-10-02',
    ]);
    // The day before is left unread; the same day is read to compare the time sent; the legacy
    // object is read for its reason.
    expect([...reads].sort()).toEqual(
      [
        legacyKey,
        'rejects/aggregate/reason=schema-violation/date=2026-10-02/a-1.json',
        'rejects/ingest/reason=schema-violation/date=2026-10-02/m-2.json',
        'rejects/ingest/reason=schema-violation/date=2026-10-03/m-4.json',
      ].sort(),
    );
  });

  it('selects the rejects naming one batch, whatever their reason, and within one reason reads only its keys', async () => {
    const { store, reads, legacyKey } = await quarantine();
    const named = await readRejects(store, { batchId: 'b-5' });
    expect(named.map((r) => [r.messageId, r.reason])).toEqual([
      ['m-1', 'schema-violation'],
      ['m-5', 'event-conflict'],
      ['m-5', 'event-conflict'],
    ]);
    // The parts of other batches are known from their keys, and left unread; the bodies refused
    // whole are named by message id, so they are read to learn their batch.
    expect(reads.filter((key) => /%2F(event-conflict|too-late)%2F/.test(key)).sort()).toEqual([
      'rejects/ingest/reason=event-conflict/date=2026-10-02/b-5%2Fevent-conflict%2Fa1.json',
      'rejects/ingest/reason=event-conflict/date=2026-10-02/b-5%2Fevent-conflict%2Fb2.json',
    ]);
    expect(await readRejects(store, { batchId: 'b-5/too-late/x' })).toMatchObject([
      { messageId: 'm-6', reason: 'event-conflict' },
    ]);
    reads.length = 0;
    const conflicts = await readRejects(store, { batchId: 'b-5', reason: 'event-conflict' });
    expect(conflicts.map((r) => r.key)).toEqual([
      'rejects/ingest/reason=event-conflict/date=2026-10-02/b-5%2Fevent-conflict%2Fa1.json',
      'rejects/ingest/reason=event-conflict/date=2026-10-02/b-5%2Fevent-conflict%2Fb2.json',
    ]);
    expect([...reads].sort()).toEqual([...conflicts.map((r) => r.key), legacyKey].sort());
  });

  it('returns every reject in the order they were sent when nothing is asked for', async () => {
    const { store } = await quarantine();
    const all = await readRejects(store);
    expect(all.map((r) => [r.messageId, r.reason])).toEqual([
      ['m-1', 'schema-violation'],
      ['m-0', 'oversize'],
      ['m-2', 'schema-violation'],
      ['a-1', 'schema-violation'],
      ['m-5', 'event-conflict'],
      ['m-5', 'event-conflict'],
      ['m-6', 'event-conflict'],
      ['m-7', 'too-late'],
      ['m-3', 'invalid-json'],
      ['m-4', 'schema-violation'],
    ]);
    expect(all.filter((r) => r.messageId === 'm-5').map((r) => r.key)).toEqual([
      'rejects/ingest/reason=event-conflict/date=2026-10-02/b-5%2Fevent-conflict%2Fa1.json',
      'rejects/ingest/reason=event-conflict/date=2026-10-02/b-5%2Fevent-conflict%2Fb2.json',
    ]);
  });
});
