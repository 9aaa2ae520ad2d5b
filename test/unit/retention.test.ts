import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { retentionVerdict } from '../../shared/retention.ts';

/** The contract's event times: years 0001 to 9999 UTC, in milliseconds. */
const instantArb = fc.integer({
  min: Date.parse('0001-01-01T00:00:00Z'),
  max: Date.parse('9999-12-31T23:59:59.999Z'),
});
const retentionArb = fc.integer({ min: 1, max: 10 * 366 * 86_400 });
const spanArb = fc
  .tuple(instantArb, instantArb)
  .map(([a, b]) => ({ earliestMs: Math.min(a, b), latestMs: Math.max(a, b) }));

const day = 86_400_000;

describe('ledger retention', () => {
  it('refuses every batch holding one of its events once a ledger entry can have expired, whatever the times', () => {
    fc.assert(
      fc.property(
        spanArb,
        retentionArb,
        instantArb,
        // Another batch sharing one event of the first (any instant of its span), with events
        // before and after it; and how long after the entry's expiry it arrives.
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.nat({ max: 400 * day }),
        fc.nat({ max: 400 * day }),
        fc.integer({ min: 1, max: 400 * day }),
        (span, retention, firstMs, at, before, after, later) => {
          const first = retentionVerdict(span, firstMs, retention);
          fc.pre(!first.refused);
          if (first.refused) return; // (for the type: pre() has thrown)
          const shared = Math.round(span.earliestMs + at * (span.latestMs - span.earliestMs));
          const other = { earliestMs: shared - before, latestMs: shared + after };
          // DynamoDB's TTL deletes an item only once its expiry is in the past.
          const verdict = retentionVerdict(other, first.expiresAtSeconds * 1000 + later, retention);
          expect(verdict.refused).toBe(true);
        },
      ),
    );
  });

  it('keeps an accepted batch’s entry the retention past both now and its newest event', () => {
    fc.assert(
      fc.property(spanArb, retentionArb, instantArb, (span, retention, nowMs) => {
        const verdict = retentionVerdict(span, nowMs, retention);
        fc.pre(!verdict.refused);
        if (verdict.refused) return; // (for the type: pre() has thrown)
        expect(verdict.expiresAtSeconds * 1000).toBeGreaterThanOrEqual(nowMs + retention * 1000);
        expect(verdict.expiresAtSeconds * 1000).toBeGreaterThanOrEqual(
          span.latestMs + retention * 1000,
        );
      }),
    );
  });

  it('refuses a batch by its earliest event, however recent the rest', () => {
    const now = Date.parse('2026-12-06T00:00:00Z');
    const span = { earliestMs: now - 31 * day, latestMs: now };
    expect(retentionVerdict(span, now, 30 * 86_400)).toEqual({
      refused: true,
      detail:
        'earliest event 2026-11-05T00:00:00.000Z is older than the ledger retention of 2592000s',
    });
    expect(retentionVerdict({ ...span, earliestMs: now - 30 * day }, now, 30 * 86_400)).toEqual({
      refused: false,
      expiresAtSeconds: (now + 30 * day) / 1000,
    });
  });

  it('stamps a batch of future events with an expiry after its newest event', () => {
    const now = Date.parse('2026-12-06T00:00:00Z');
    const span = { earliestMs: now + day, latestMs: now + 3 * day };
    expect(retentionVerdict(span, now, 30 * 86_400)).toEqual({
      refused: false,
      expiresAtSeconds: (now + 33 * day) / 1000,
    });
  });
});
