/**
 * Reject objects are read back by `onceflow rejects`, the chaos judge and the tests through one
 * schema, beside the writer. Content under rejects/ is input too: a foreign object is named.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRejectObject, type StoredReject } from '../../adapters/s3-quarantine.ts';
import { bodiesForCorrection, printedBody } from '../../cli/commands/rejects.ts';
import { bodyLines } from '../../cli/input.ts';
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

describe('quarantined bodies for correction (`rejects --bodies`)', () => {
  const reject = (over: Partial<StoredReject>): StoredReject => ({
    key: `rejects/ingest/${over.messageId ?? 'm'}.json`,
    ...record,
    ...over,
  });

  it('puts each body on one line as `send` reads it, a JSON body that spans lines with every value kept byte for byte', () => {
    const pretty =
      '{\r\n  "batchId": "b-1",\n  "events": [{ "amount": 12345678901234567890.125, "note": "a\\nb" }]\r}';
    const { lines, skipped } = bodiesForCorrection([
      reject({ messageId: 'm-1', reason: 'invalid-json', body: '{"batchId": ' }),
      reject({ messageId: 'm-2', reason: 'schema-violation', body: pretty }),
    ]);
    expect(skipped).toEqual([]);
    expect(lines).toEqual([
      '{"batchId": ',
      '{   "batchId": "b-1",   "events": [{ "amount": 12345678901234567890.125, "note": "a\\nb" }] }',
    ]);
    expect(bodyLines(`${lines.join('\n')}\n`).bodies).toEqual(lines);
  });

  it('prints a body exactly into a file or pipe, and with its control characters escaped on a terminal', () => {
    const hostile = '{"batchId":"\u001b]0;pwned\u0007"}';
    expect(printedBody(hostile, false)).toBe(hostile);
    expect(printedBody(hostile, true)).toBe('{"batchId":"\\u{001b}]0;pwned\\u{0007}"}');
  });

  it('keeps the meaning of any JSON body, however its lines are broken', () => {
    fc.assert(
      fc.property(fc.json(), fc.constantFrom('\n', '\r\n', '\r'), (text, eol) => {
        const body = JSON.stringify(JSON.parse(text), null, 2).replaceAll('\n', eol);
        const { lines } = bodiesForCorrection([reject({ reason: 'schema-violation', body })]);
        expect(lines).toHaveLength(1);
        expect(lines[0]).not.toMatch(/[\r\n]/);
        expect(JSON.parse(lines[0] ?? '')).toEqual(JSON.parse(text));
      }),
    );
  });

  it('leaves out event conflicts, too-late parts and a body that spans lines and is not JSON, saying what to do instead', () => {
    const { lines, skipped } = bodiesForCorrection([
      reject({ messageId: 'm-1', reason: 'event-conflict', body: '{"eventId":"e-1"}' }),
      reject({ messageId: 'm-2', reason: 'too-late', body: '{"batchId":"b-1","events":[]}' }),
      reject({ messageId: 'm-3', reason: 'invalid-json', body: '{"batchId":\n"b-' }),
      reject({ messageId: 'm-4', reason: 'invalid-json', body: 'plain' }),
    ]);
    expect(lines).toEqual(['plain']);
    expect(skipped.map((s) => [s.messageId, s.reason])).toEqual([
      ['m-1', 'event-conflict'],
      ['m-2', 'too-late'],
      ['m-3', 'invalid-json'],
    ]);
    expect(skipped[0]?.why).toContain('a new eventId');
    expect(skipped[1]?.why).toContain('onceflow replay rejects --reason too-late');
    expect(skipped[2]?.why).toContain('onceflow rejects --json');
  });

  it('says what batch-conflict, oversize and beyond-retention bodies need before they are sent again', () => {
    const { lines, notes } = bodiesForCorrection([
      reject({ messageId: 'm-1', reason: 'batch-conflict', body: '{"batchId":"b-1"}' }),
      reject({ messageId: 'm-2', reason: 'batch-conflict', body: '{"batchId":"b-2"}' }),
      reject({ messageId: 'm-3', reason: 'oversize', body: '{"batchId":"b-3"}' }),
      reject({ messageId: 'm-4', reason: 'beyond-retention', body: '{"batchId":"b-4"}' }),
      reject({ messageId: 'm-5', reason: 'schema-violation', body: '{"batchId":"b-5"}' }),
    ]);
    expect(lines).toHaveLength(5);
    expect(notes).toEqual([
      '2 batch-conflict bodies: give each a new batchId: the one it names is taken by other content',
      '1 oversize body: split its events into batches within the queue’s message size, each under a new batchId',
      '1 beyond-retention body: it is refused again while its earliest event is older than the ledger retention',
    ]);
  });
});
