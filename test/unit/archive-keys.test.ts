import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { batchIdOfArchiveKey, hourOfArchiveKey, rawArchiveKey } from '../../shared/keys.ts';
import { BatchIdSchema } from '../../shared/schema.ts';

/** Any batch id the contract allows. */
const batchId = fc.stringMatching(/^[A-Za-z0-9._:/-]{1,128}$/);
/** Any whole UTC hour from 1970 to 9999. */
const hour = fc
  .integer({ min: 0, max: Date.UTC(9999, 11, 31, 23) / 3_600_000 })
  .map((h) => new Date(h * 3_600_000).toISOString().replace('.000Z', 'Z'));

describe('raw archive keys', () => {
  it('give back the batch id and the hour they were made from, for any allowed id and hour', () => {
    fc.assert(
      fc.property(batchId, hour, (id, h) => {
        expect(v.is(BatchIdSchema, id)).toBe(true);
        const key = rawArchiveKey(id, h);
        expect(batchIdOfArchiveKey(key)).toBe(id);
        expect(hourOfArchiveKey(key)).toBe(h);
      }),
    );
  });

  it('name no batch when a key is not one the archive makes', () => {
    for (const key of [
      'raw/date=2026-10-01/hour=01/',
      'raw/date=2026-10-01/hour=01/b-1.txt',
      'raw/date=2026-10-01/b-1.json',
      'raw/date=2026-10-01/hour=01/nested/b-1.json',
      'rejects/ingest/reason=oversize/date=2026-10-01/b-1.json',
      // Percent-encoding that does not decode: put there by hand.
      'raw/date=2026-10-01/hour=01/b%E0%A4%A.json',
    ])
      expect(batchIdOfArchiveKey(key), key).toBeUndefined();
  });
});
