import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateStream } from '../../harness/generate.ts';
import { batchDigest } from '../../shared/digest.ts';
import { type PreflightVerdict, preflight } from '../../shared/preflight.ts';
import { parseBatchBody } from '../../shared/schema.ts';

const MAX_BODY_BYTES = 1024 * 1024;

/** What a stream applies, as the verdicts announce it: the batches and the events counted. */
const applied = (verdicts: readonly PreflightVerdict[]) => {
  const applying = verdicts.flatMap((v) => (v.kind === 'applies' ? [v] : []));
  return {
    batches: applying.map((v) => v.batchId).sort(),
    events: applying.reduce((n, v) => n + v.events, 0),
  };
};

describe('preflight', () => {
  it('announces the same batches and events applied however many times each body is sent again, later', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 20 }),
        (seed, copies) => {
          const { lines } = generateStream({
            orders: 20,
            hours: 2,
            seed,
            batchSize: 8,
            invalidRate: 0.3,
          });
          // Each copy goes somewhere after its original: SQS redelivering, a producer retrying.
          const sent = [...lines];
          for (const [which, where] of copies) {
            const i = which % lines.length;
            const at = sent.indexOf(lines[i] ?? '') + 1;
            sent.splice(at + (where % (sent.length - at + 1)), 0, lines[i] ?? '');
          }
          const once = preflight(lines, MAX_BODY_BYTES);
          const again = preflight(sent, MAX_BODY_BYTES);
          expect(applied(again)).toEqual(applied(once));
          // Each extra copy is a repeat of its batch, or refused again: none conflicts.
          const count = (vs: readonly PreflightVerdict[], kind: PreflightVerdict['kind']) =>
            vs.filter((v) => v.kind === kind).length;
          expect(count(again, 'batch-conflict')).toBe(count(once, 'batch-conflict'));
          expect(count(again, 'repeat') + count(again, 'refused')).toBe(
            count(once, 'repeat') + count(once, 'refused') + sent.length - lines.length,
          );
        },
      ),
    );
  });

  it('takes a batch the stack already holds as a repeat, and its id with other content as a conflict, however often the file sends it', () => {
    const { lines } = generateStream({ orders: 6, hours: 1, seed: 3, batchSize: 3 });
    const [a = '', b = ''] = lines;
    const alone = preflight([a, b], MAX_BODY_BYTES);
    const [first, second] = alone;
    if (first?.kind !== 'applies' || second?.kind !== 'applies') throw new Error('two batches');
    const digestOf = (body: string) => {
      const batch = parseBatchBody(body, MAX_BODY_BYTES);
      return batchDigest(batch);
    };
    const known = new Map([
      [first.batchId, digestOf(a)],
      [second.batchId, 'the digest of other content'],
    ]);
    const verdicts = preflight([a, b, a, b], MAX_BODY_BYTES, { known });
    expect(verdicts).toEqual([
      { kind: 'repeat', batchId: first.batchId, first: 'stack' },
      { kind: 'batch-conflict', batchId: second.batchId, first: 'stack' },
      { kind: 'repeat', batchId: first.batchId, first: 'stack' },
      { kind: 'batch-conflict', batchId: second.batchId, first: 'stack' },
    ]);
  });
});
