/**
 * Ledger retention (README, "Ledger retention"). A batch whose earliest event is older than the
 * retention is refused; an accepted batch's ledger entry, and each claim on its events, expire
 * the retention after its newest event or after now, whichever is later. Together they make
 * forgetting safe: once an entry can have expired, every batch holding any of its events is
 * refused, so no event can be applied twice.
 */

/** The span of a batch's event times. */
export interface EventSpan {
  readonly earliestMs: number;
  readonly latestMs: number;
}

export type RetentionVerdict =
  | { readonly refused: true; readonly detail: string }
  | { readonly refused: false; readonly expiresAtSeconds: number };

export const retentionVerdict = (
  span: EventSpan,
  nowMs: number,
  retentionSeconds: number,
): RetentionVerdict => {
  const retentionMs = retentionSeconds * 1000;
  if (span.earliestMs < nowMs - retentionMs) {
    return {
      refused: true,
      detail: `earliest event ${new Date(span.earliestMs).toISOString()} is older than the ledger retention of ${retentionSeconds}s`,
    };
  }
  // From the newest event, not only from now: a batch of future events (a producer's clock
  // ahead) stays remembered until a copy of it would be refused.
  return {
    refused: false,
    expiresAtSeconds: Math.ceil((Math.max(nowMs, span.latestMs) + retentionMs) / 1000),
  };
};
