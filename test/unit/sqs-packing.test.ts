import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { packBodies, SQS_MAX_BATCH_ENTRIES, SQS_MAX_REQUEST_BYTES } from '../../adapters/sqs.ts';
import { eventsWithinPayload, toSqsRecord } from '../../local/sqs-event.ts';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('packing bodies into SendMessageBatch requests', () => {
  it('puts ten 150 KB bodies into two requests instead of one that SQS would refuse', () => {
    const bodies = Array.from({ length: 10 }, (_, i) => `${i}`.padEnd(150_000, 'x'));
    const { requests, oversize } = packBodies(bodies, 1_048_576);
    expect(oversize).toEqual([]);
    expect(requests).toEqual([
      [0, 1, 2, 3, 4, 5],
      [6, 7, 8, 9],
    ]);
  });

  it('sets aside a body over the queue’s limit and keeps every other in order', () => {
    const bodies = ['a', 'b'.repeat(2048), 'c'];
    expect(packBodies(bodies, 1024)).toEqual({ requests: [[0, 2]], oversize: [1] });
  });

  it('keeps every request within 10 entries and 1 MiB, and sends each body exactly once, for any sizes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 1_100_000 }), { maxLength: 40 }),
        fc.constantFrom(1024, 262_144, 1_048_576),
        (sizes, limit) => {
          const bodies = sizes.map(
            (n, i) => '😀'.repeat(Math.floor(n / 4)) + 'x'.repeat(n % 4) + i,
          );
          const { requests, oversize } = packBodies(bodies, limit);
          for (const request of requests) {
            expect(request.length).toBeLessThanOrEqual(SQS_MAX_BATCH_ENTRIES);
            expect(request.reduce((s, i) => s + bytes(bodies[i] ?? ''), 0)).toBeLessThanOrEqual(
              SQS_MAX_REQUEST_BYTES,
            );
          }
          expect([...requests.flat(), ...oversize].sort((a, b) => a - b)).toEqual(
            bodies.map((_, i) => i),
          );
          expect(requests.flat()).toEqual([...requests.flat()].sort((a, b) => a - b));
          for (const i of oversize) expect(bytes(bodies[i] ?? '')).toBeGreaterThan(limit);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('splitting a received batch into events within Lambda’s payload limit', () => {
  const record = (id: number, body: string) =>
    toSqsRecord(
      { MessageId: String(id), ReceiptHandle: 'r', Body: body, Attributes: { SentTimestamp: '1' } },
      'arn:aws:sqs:us-east-1:000000000000:q',
      'us-east-1',
    );
  const eventBytes = (event: unknown) => bytes(JSON.stringify(event));

  it('keeps every record once, in order, each event within the limit unless a record alone exceeds it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 3000, unit: 'binary' }), { maxLength: 12 }),
        fc.integer({ min: 500, max: 8000 }),
        (bodies, limit) => {
          const records = bodies.map((body, i) => record(i, body));
          const events = eventsWithinPayload(records, limit);
          expect(events.flatMap((e) => e.Records)).toEqual(records);
          for (const e of events) {
            expect(e.Records.length).toBeGreaterThan(0);
            if (e.Records.length > 1) expect(eventBytes(e)).toBeLessThanOrEqual(limit);
          }
          // As few events as the order allows: no event could have taken its successor's first.
          for (const [i, e] of events.slice(0, -1).entries()) {
            const next = events[i + 1]?.Records[0];
            if (next) expect(eventBytes({ Records: [...e.Records, next] })).toBeGreaterThan(limit);
          }
        },
      ),
    );
  });
});
