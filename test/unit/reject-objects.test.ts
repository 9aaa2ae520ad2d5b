/**
 * Reject objects are read back by `onceflow rejects`, the chaos judge and the tests through one
 * schema, beside the writer. Content under rejects/ is input too: a foreign object is named.
 */
import { describe, expect, it } from 'vitest';
import { parseRejectObject } from '../../adapters/s3.ts';
import { UnexpectedObjectError } from '../../shared/errors.ts';

const KEY = 'rejects/ingest/date=2026-10-01/m-1.json';
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
