/**
 * An hour's lifecycle as its object tells consumers: `open` until the finalizer marks it, then
 * `final`; a change after that is an amendment, counted in the object. What a consumer read as
 * final therefore either never changes or says that it changed.
 */
import { type HourAggregate, sameAggregate } from './aggregate.ts';

/**
 * The finalizer's mark on an hour, kept beside its counters. It is written in two steps: closing
 * (from then on the `quarantine` policy refuses the hour's late events) and, once no batch that
 * found the hour open can still add to it, final.
 */
export interface FinalMark {
  readonly closedAtMs: number;
  /** When the hour became final; undefined while it is closing. */
  readonly finalizedAtMs?: number;
  /**
   * The revision the finalizer published as final (0 for an hour without events), once it did:
   * consumers may have read it, so any other content is an amendment.
   */
  readonly finalRevision?: number;
}

/** The lifecycle fields of an hour object; none while the hour is open. */
export interface HourLifecycle {
  readonly final?: true;
  readonly finalizedAt?: string;
  readonly amendments?: number;
  readonly amendedAt?: string;
}

export type HourState = 'open' | 'final' | 'amended';

export const stateOf = (lifecycle: HourLifecycle): HourState =>
  lifecycle.final ? ((lifecycle.amendments ?? 0) > 0 ? 'amended' : 'final') : 'open';

/**
 * The lifecycle the next publication of an hour carries: open until the finalizer's mark says
 * final; then final, and amended once more if consumers may have read other final content (the
 * stored object was final with other content, or the finalizer published another revision, e.g.
 * an hour that had no events when it was finalized). A stored final object stays final even
 * without its mark (a table restored to a copy older than the mark): what consumers read as
 * final never turns open again.
 */
export const nextLifecycle = (o: {
  readonly mark: FinalMark | undefined;
  readonly stored:
    | { readonly aggregate?: HourAggregate; readonly lifecycle: HourLifecycle }
    | undefined;
  readonly aggregate: HourAggregate;
  readonly nowMs: number;
}): { readonly lifecycle: HourLifecycle; readonly amended: boolean } => {
  const previous = o.stored?.lifecycle;
  const finalizedAt =
    (previous?.final ? previous.finalizedAt : undefined) ??
    (o.mark?.finalizedAtMs === undefined
      ? undefined
      : new Date(o.mark.finalizedAtMs).toISOString());
  if (finalizedAt === undefined) return { lifecycle: {}, amended: false };
  const finalRevision = o.mark?.finalRevision;
  const amended = previous?.final
    ? !o.stored?.aggregate || !sameAggregate(o.stored.aggregate, o.aggregate)
    : finalRevision !== undefined && finalRevision !== o.aggregate.revision;
  const amendments = (previous?.final ? (previous.amendments ?? 0) : 0) + (amended ? 1 : 0);
  const amendedAt = amended ? new Date(o.nowMs).toISOString() : previous?.amendedAt;
  return {
    lifecycle: {
      final: true,
      finalizedAt,
      amendments,
      ...(amendments > 0 && amendedAt ? { amendedAt } : {}),
    },
    amended,
  };
};

/** Whether two lifecycles say the same to a consumer (a rewrite for none of it is pointless). */
export const sameLifecycle = (a: HourLifecycle, b: HourLifecycle) =>
  (a.final ?? false) === (b.final ?? false) &&
  (a.amendments ?? 0) === (b.amendments ?? 0) &&
  a.finalizedAt === b.finalizedAt;
