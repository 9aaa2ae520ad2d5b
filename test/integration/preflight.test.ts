/**
 * `onceflow validate` says, before a file is sent, what the pipeline will do with each body. Its
 * verdicts are checked against the pipeline itself: the same bodies delivered in the file's
 * order leave exactly the rejects and the counted events the verdicts announce.
 */
import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { generateStream } from '../../harness/generate.ts';
import { preflight } from '../../shared/preflight.ts';
import { validateBatch } from '../../shared/schema.ts';
import { parseJson } from '../support/json.ts';
import { createPipeline } from '../support/pipeline.ts';

const MAX_BODY_BYTES = 1024 * 1024;

/** A generated body's batch, edited: its id, and the amount of one event. */
const RawBatchSchema = v.looseObject({
  batchId: v.string(),
  events: v.array(v.looseObject({ amount: v.string() })),
});
const edited = (body: string, o: { batchId?: string; repriceEvent?: number }) => {
  const raw = parseJson(RawBatchSchema, body);
  const events = raw.events.map((e, i) =>
    i === o.repriceEvent ? { ...e, amount: e.amount === '1.00' ? '2.00' : '1.00' } : e,
  );
  return JSON.stringify({ ...raw, batchId: o.batchId ?? raw.batchId, events });
};

/**
 * Bodies a producer sends: valid batches, exact copies, invalid bodies of every kind the
 * generator makes, a reused id with other content, one event re-sent with other content in a
 * new batch, a batch of events sent before under a new id, a body cut short and one too large.
 */
const pool = (() => {
  const { lines } = generateStream({
    orders: 12,
    hours: 2,
    seed: 11,
    batchSize: 6,
    invalidRate: 0.6,
    duplicateRate: 0.3,
  });
  const valid = lines.filter((l) => {
    try {
      return validateBatch(JSON.parse(l)).ok;
    } catch {
      return false;
    }
  });
  const [first = '', second = ''] = valid;
  return [
    ...lines,
    edited(first, { repriceEvent: 0 }),
    edited(second, { batchId: 'resent-with-one-changed', repriceEvent: 1 }),
    edited(first, { batchId: 'resent-the-same' }),
    '{"batchId": "cut-short", "events": [',
    JSON.stringify({ batchId: 'over-the-limit', events: [], pad: 'x'.repeat(MAX_BODY_BYTES) }),
  ];
})();

/**
 * What a reject or a verdict names: its reason and the body refused whole, or for an event
 * conflict the batch and the event (its reject holds the one event, not the batch's body).
 */
const rejectOf = (reason: string, refused: string, event?: { orderId: string; eventId: string }) =>
  JSON.stringify([reason, refused, event?.orderId ?? '', event?.eventId ?? '']);

describe('validate, against the pipeline', () => {
  it('announces exactly the rejects and the counted events that delivering the file in its order leaves, for any file of these bodies', async () => {
    // Whatever the draw, the whole pool in its order is one of the files: every kind of verdict.
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat({ max: pool.length - 1 }), { minLength: 1, maxLength: 14 }),
        async (picks) => {
          const bodies = picks.map((i) => pool[i] ?? '');
          const verdicts = preflight(bodies, MAX_BODY_BYTES);
          for (const v of verdicts) {
            seen.add(v.kind === 'refused' ? v.reason : v.kind);
            if (v.kind === 'applies' && v.conflicts.length > 0) seen.add('event-conflict');
            if (v.kind === 'applies' && v.repeatedEvents > 0) seen.add('repeated events');
          }
          const p = await createPipeline();
          for (const body of bodies) await p.deliverUntilDone([body]);

          const expected = verdicts.flatMap((v, i) => {
            const body = bodies[i] ?? '';
            if (v.kind === 'refused') return [rejectOf(v.reason, body)];
            if (v.kind === 'batch-conflict') return [rejectOf('batch-conflict', body)];
            if (v.kind === 'applies')
              return v.conflicts.map((c) => rejectOf('event-conflict', v.batchId, c));
            return [];
          });
          const rejects = (await p.rejects()).map((r) =>
            r.conflict
              ? rejectOf(r.reason, r.batchId ?? '', r.conflict)
              : rejectOf(r.reason, r.body),
          );
          expect(rejects.sort()).toEqual(expected.sort());

          const applying = verdicts.filter((v) => v.kind === 'applies');
          const totals = await new DynamoLedger(p.admin.dynamo, p.tableName).totals();
          expect(totals).toEqual({
            batches: applying.length,
            events: applying.reduce((n, v) => n + v.events, 0),
          });
        },
      ),
      { numRuns: 12, examples: [[pool.map((_, i) => i)]] },
    );
    expect([...seen].sort()).toEqual([
      'applies',
      'batch-conflict',
      'duplicate-event-id',
      'event-conflict',
      'invalid-json',
      'oversize',
      'repeat',
      'repeated events',
      'schema-violation',
    ]);
  });
});
