/**
 * The late policy: what happens to a batch's events of an hour the finalizer has already closed
 * (see shared/finalizer.ts). Under `amend` nothing here runs; under `quarantine` a batch decides
 * once which of its hours are too late and reports each refused part.
 */
import { eventContent } from './conflicts.ts';
import { stableHash } from './digest.ts';
import type { BatchPlan, ClaimResult, IncomingMessage, Ledger, Quarantine } from './ingest.ts';
import { batchPartRejectId } from './keys.ts';
import type { FinalMark } from './lifecycle.ts';

/**
 * What happens to an event whose hour is already closed or final: `amend` applies it and the
 * hour is republished with its amendments count raised; `quarantine` refuses the batch's events
 * of that hour (`too-late`, in rejects/) and applies the rest.
 */
export type LatePolicy = 'amend' | 'quarantine';

/** What the quarantine policy reads: the finalizer's marks (strongly consistent). */
export interface HourMarks {
  marksOf(hours: readonly string[]): Promise<ReadonlyMap<string, FinalMark>>;
}

/**
 * Quarantines a batch's events of one closed hour: nothing of them was applied. The body is those
 * events as a batch of their own, named after the original (whose id stays taken), so an operator
 * can read them, and re-send them under a new batch id should the hour be reopened by hand.
 */
export const reportTooLate = async (
  plan: BatchPlan,
  hour: string,
  message: IncomingMessage,
  ports: { readonly quarantine: Quarantine },
) => {
  const events = plan.batch.events.filter((e) => e.hour === hour);
  await ports.quarantine.put({
    source: 'ingest',
    messageId: message.messageId,
    sentAtMs: message.sentAtMs,
    reason: 'too-late',
    detail: `${events.length} event(s) of batch ${plan.batch.batchId} in hour ${hour}, which was closed or final when the batch arrived (latePolicy quarantine); the batch's other hours were applied`,
    batchId: plan.batch.batchId,
    body: JSON.stringify({ batchId: plan.batch.batchId, events: events.map(eventContent) }),
    id: batchPartRejectId(plan.batch.batchId, 'too-late', hour),
  });
};

/**
 * The batch id a too-late part is re-sent under (`onceflow replay rejects`): a new one, since the
 * original stays taken, and a pure function of the part, so re-sending it twice applies it once.
 * 37 characters, whatever the original's length.
 */
export const resentBatchId = (rejectBody: string) =>
  `late-${stableHash(rejectBody).toString('hex', 0, 16)}`;

/**
 * The batch's hours it must not touch. Decided once, after the claim put the batch in the pending
 * index, from the marks read then (see shared/finalizer.ts), and kept in the ledger: every
 * delivery follows the first decision, so a batch is never half applied to an hour.
 */
export const lateHoursOf = async (
  plan: BatchPlan,
  claim: ClaimResult,
  ports: { readonly marks: HourMarks; readonly ledger: Pick<Ledger, 'recordLateHours'> },
  policy: LatePolicy | undefined,
): Promise<ReadonlySet<string>> => {
  if (policy !== 'quarantine') return new Set();
  const decided = claim.claimed ? undefined : claim.entry.lateHours;
  if (decided) return decided;
  const closed = await ports.marks.marksOf(plan.hours);
  return ports.ledger.recordLateHours(plan, [...closed.keys()]);
};
