/**
 * Reject objects are read back by `onceflow rejects`, the chaos judge and the tests through one
 * schema, beside the writer. Content under rejects/ is input too: a foreign object is named.
 */
import { describe, expect, it } from 'vitest';
import { parseRejectObject } from '../../adapters/s3-quarantine.ts';
import { UnexpectedObjectError } from '../../shared/errors.ts';
import { batchPartRejectId, rejectKey, rejectKeyFields } from '../../shared/keys.ts';

const KEY = 'rejects/ingest/reason=invalid-json/date=2026-10-01/m-1.json';
const record = {
  source: 'ingest',
  sentAt: '2026-10-01T08:00:00.000Z',
  reason: 'invalid-json',
  detail: 'Unexpected end of JSON input',
  messageId: 'm-1',
  body: '{"batchId": ',
};

describe('reading a reject object', () => {
  it('returns the record with its key when the object is one the quarantine wrote', () => {
    expect(parseRejectObject(KEY, JSON.stringify(record))).toEqual({ key: KEY, ...record });
  });

  it('names the key and the missing field when the object lacks one', () => {
    const { body: _, ...withoutBody } = record;
    const read = () => parseRejectObject(KEY, JSON.stringify(withoutBody));
    expect(read).toThrow(UnexpectedObjectError);
    expect(read).toThrow(`${KEY}: is not a reject record`);
    expect(read).toThrow('body');
  });

  it('names the key when the object is not JSON, keeping the parse error as its cause', () => {
    try {
      parseRejectObject(KEY, 'not json');
      expect.unreachable('a non-JSON object was read as a reject');
    } catch (error) {
      expect(error).toBeInstanceOf(UnexpectedObjectError);
      expect((error as Error).message).toBe(`${KEY}: is not JSON`);
      expect((error as Error).cause).toBeInstanceOf(SyntaxError);
    }
  });
});

describe('the key of a reject', () => {
  it('names the source, the reason and the day sent, and reads them back', () => {
    const key = rejectKey('ingest', 'event-conflict', Date.parse('2026-10-01T23:59:59Z'), 'b/e/1');
    expect(key).toBe('rejects/ingest/reason=event-conflict/date=2026-10-01/b%2Fe%2F1.json');
    expect(rejectKeyFields(key)).toEqual({
      source: 'ingest',
      reason: 'event-conflict',
      date: '2026-10-01',
    });
  });

  it('names the batch of a reject of one part of a batch, slashes in its id included', () => {
    const sent = Date.parse('2026-10-01T09:00:00Z');
    const key = (batchId: string, kind: 'event-conflict' | 'too-late', part: string) =>
      rejectKey('ingest', kind, sent, batchPartRejectId(batchId, kind, part));
    expect(rejectKeyFields(key('b-1', 'event-conflict', '0a1b2c'))?.batchId).toBe('b-1');
    expect(rejectKeyFields(key('b/too-late/1', 'too-late', '2026-10-01T09:00:00Z'))).toEqual({
      source: 'ingest',
      reason: 'too-late',
      date: '2026-10-01',
      batchId: 'b/too-late/1',
    });
    // Named by its message id: only the object knows the batch.
    expect(rejectKeyFields(rejectKey('ingest', 'schema-violation', sent, 'm-1'))).toEqual({
      source: 'ingest',
      reason: 'schema-violation',
      date: '2026-10-01',
    });
  });

  it('reads a key without the reason, as written before it was in the key, with no reason', () => {
    expect(rejectKeyFields('rejects/aggregate/date=2026-10-01/m-1.json')).toEqual({
      source: 'aggregate',
      date: '2026-10-01',
    });
  });

  it('reads nothing from a key the quarantine did not write', () => {
    expect(rejectKeyFields('rejects/ingest/m-1.json')).toBeUndefined();
    expect(rejectKeyFields('raw/date=2026-10-01/hour=09/b.json')).toBeUndefined();
  });
});
