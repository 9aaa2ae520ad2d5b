import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HourAggregate } from '../../shared/aggregate.ts';
import {
  type FinalMark,
  type HourLifecycle,
  nextLifecycle,
  stateOf,
} from '../../shared/lifecycle.ts';

const HOUR = '2026-10-01T09:00:00Z';
const T0 = Date.parse('2026-10-01T12:00:00Z');

/** An hour with `events` placed USD events of 1.00, at this revision. */
const hourOf = (events: number, revision: number): HourAggregate => ({
  hour: HOUR,
  events,
  byStatus: events ? { placed: { events, amounts: { USD: `${events}.00` } } } : {},
  revision,
});

describe('the hour lifecycle', () => {
  it('stays open until the mark says final, and is not final while the hour is only closed', () => {
    const aggregate = hourOf(1, 1);
    const closed: FinalMark = { closedAtMs: T0 };
    expect(nextLifecycle({ mark: undefined, stored: undefined, aggregate, nowMs: T0 })).toEqual({
      lifecycle: {},
      amended: false,
    });
    expect(
      nextLifecycle({ mark: closed, stored: undefined, aggregate, nowMs: T0 }).lifecycle,
    ).toEqual({});
    const final = nextLifecycle({
      mark: { closedAtMs: T0, finalizedAtMs: T0 + 1 },
      stored: { aggregate, lifecycle: {} },
      aggregate,
      nowMs: T0 + 2,
    });
    expect(final).toEqual({
      lifecycle: { final: true, finalizedAt: new Date(T0 + 1).toISOString(), amendments: 0 },
      amended: false,
    });
    expect(stateOf(final.lifecycle)).toBe('final');
  });

  it('counts an amendment when final content changes, or when the finalizer published another revision', () => {
    const mark = { closedAtMs: T0, finalizedAtMs: T0, finalRevision: 1 };
    const stored = {
      aggregate: hourOf(1, 1),
      lifecycle: { final: true, finalizedAt: new Date(T0).toISOString(), amendments: 0 } as const,
    };
    const changed = nextLifecycle({ mark, stored, aggregate: hourOf(2, 2), nowMs: T0 + 5 });
    expect(changed.amended).toBe(true);
    expect(changed.lifecycle).toMatchObject({
      amendments: 1,
      amendedAt: new Date(T0 + 5).toISOString(),
    });
    expect(stateOf(changed.lifecycle)).toBe('amended');
    // An hour finalized without events (revision 0, no object): its first event amends it.
    const empty = { closedAtMs: T0, finalizedAtMs: T0, finalRevision: 0 };
    expect(
      nextLifecycle({ mark: empty, stored: undefined, aggregate: hourOf(1, 1), nowMs: T0 }).amended,
    ).toBe(true);
  });

  it('keeps a stored final hour final when its mark is gone (a table restored to an older copy)', () => {
    const stored = {
      aggregate: hourOf(1, 1),
      lifecycle: { final: true, finalizedAt: new Date(T0).toISOString(), amendments: 0 } as const,
    };
    const same = nextLifecycle({ mark: undefined, stored, aggregate: hourOf(1, 1), nowMs: T0 });
    expect(same).toEqual({ lifecycle: stored.lifecycle, amended: false });
    const other = nextLifecycle({ mark: undefined, stored, aggregate: hourOf(3, 2), nowMs: T0 });
    expect(other.lifecycle).toMatchObject({ final: true, amendments: 1 });
  });

  it('never turns a final hour open, and never changes final content without raising amendments, for any course of publications', () => {
    // Each step: the hour's content now, and the mark now (none, closed, final, or lost again).
    const step = fc.record({
      events: fc.integer({ min: 0, max: 3 }),
      mark: fc.constantFrom('none', 'closed', 'final'),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), (steps) => {
        let stored: { aggregate: HourAggregate; lifecycle: HourLifecycle } | undefined;
        let revision = 0;
        let finalRevision: number | undefined;
        for (const [i, s] of steps.entries()) {
          if (!stored || s.events !== stored.aggregate.events) revision++;
          const aggregate = hourOf(s.events, revision);
          const mark: FinalMark | undefined =
            s.mark === 'none'
              ? undefined
              : s.mark === 'closed'
                ? { closedAtMs: T0 }
                : {
                    closedAtMs: T0,
                    finalizedAtMs: T0,
                    ...(finalRevision === undefined ? {} : { finalRevision }),
                  };
          const next = nextLifecycle({ mark, stored, aggregate, nowMs: T0 + i });
          if (stored?.lifecycle.final) {
            expect(next.lifecycle.final).toBe(true);
            const before = stored.lifecycle.amendments ?? 0;
            const after = next.lifecycle.amendments ?? 0;
            if (stored.aggregate.events !== aggregate.events) expect(after).toBe(before + 1);
            else expect(after).toBe(before);
          }
          // The finalizer records the first revision it published as final.
          if (next.lifecycle.final && finalRevision === undefined) finalRevision = revision;
          stored = { aggregate, lifecycle: next.lifecycle };
        }
      }),
    );
  });
});
