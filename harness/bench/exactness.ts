/**
 * Whether a bench pass ended exactly where the reference model says: every hour and order equal,
 * and every conflicting re-send reported where the approach can report them. What it finds
 * otherwise is counted, so the report says how an approach is wrong, not only that it is.
 */
import type { referenceModel } from '../model.ts';
import type { PassState } from './approaches.ts';

export interface Exactness {
  readonly exact: boolean;
  /** Events counted beyond the model's (negative: events lost). */
  readonly doubleCountedEvents: number;
  /** Orders not on the state the model gives them (an older event, or missing). */
  readonly staleOrders: number;
  /** Event conflicts the approach reported; undefined when it cannot report them. */
  readonly conflictsReported: number | undefined;
}

export const exactnessOf = (
  state: PassState,
  model: Pick<ReturnType<typeof referenceModel>, 'orders' | 'hourly'>,
  /** The conflicting re-sends the pass carried, which an approach that reports them must. */
  expectedConflicts: number,
): Exactness => {
  const events = (hours: PassState['hourly']) => hours.reduce((s, h) => s + h.events, 0);
  const stored = new Map(state.orders.map((x) => [x.orderId, JSON.stringify(x)]));
  const staleOrders = model.orders.filter(
    (x) => stored.get(x.orderId) !== JSON.stringify(x),
  ).length;
  const { conflictsReported } = state;
  const exact =
    JSON.stringify(state.hourly) === JSON.stringify(model.hourly) &&
    JSON.stringify(state.orders) === JSON.stringify(model.orders) &&
    (conflictsReported === undefined || conflictsReported === expectedConflicts);
  return {
    exact,
    doubleCountedEvents: events(state.hourly) - events(model.hourly),
    staleOrders,
    conflictsReported,
  };
};
