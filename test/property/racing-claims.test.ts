/**
 * Batches carrying the same events, settled at the same time by different environments (two
 * Lambda instances share no memory, so nothing but DynamoDB's conditions stands between them):
 * each event is claimed by exactly one batch, a copy with other content is reported against the
 * content that won, and the order ends on its newest claimed event, whatever the events, their
 * times and the batches they race in. Each race reads every order before any of its writers
 * writes: the interleaving where the conditions alone decide.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DynamoOrderStore } from '../../adapters/dynamo-orders.ts';
import type { GeneratedEvent } from '../../harness/generate.ts';
import type { Settlement } from '../../shared/claims.ts';
import { eventDigest } from '../../shared/digest.ts';
import { planBatch } from '../../shared/ingest.ts';
import { isNewer } from '../../shared/order-state.ts';
import type { OrderEvent } from '../../shared/schema.ts';
import { validateBatch } from '../../shared/schema.ts';
import { createPipeline, uniqueName } from '../support/pipeline.ts';

const POOL = 6;

const poolArb = fc.array(
  fc.record({
    order: fc.constantFrom('o1', 'o2'),
    // Few minutes: ties on time, broken by event id.
    minute: fc.integer({ min: 0, max: 3 }),
    status: fc.constantFrom('placed', 'paid', 'shipped', 'refunded'),
    cents: fc.integer({ min: 0, max: 9_999 }),
  }),
  { minLength: POOL, maxLength: POOL },
);
/** Events of the pool by index; `copy` 1 is the same event id with another amount. */
const pickArb = (minLength: number, copies: number) =>
  fc.uniqueArray(
    fc.record({
      index: fc.integer({ min: 0, max: POOL - 1 }),
      copy: fc.integer({ min: 0, max: copies - 1 }),
    }),
    { minLength, maxLength: POOL, selector: (p) => p.index },
  );

const raceArb = fc.record({
  pool: poolArb,
  // Applied before the race: events claimed already, and a state the race's events may be
  // older than (then no state condition guards their writes, only the claims' own).
  prior: pickArb(0, 1),
  racers: fc.array(pickArb(1, 2), { minLength: 2, maxLength: 3 }),
});

type Choice = { readonly index: number; readonly copy: number };

const planOf = (batchId: string, events: readonly GeneratedEvent[]) => {
  const result = validateBatch({ batchId, events });
  if (!result.ok) throw new Error(result.detail);
  return planBatch(result.batch, { counterShards: 4 });
};

const holds = (events: readonly OrderEvent[], eventId: string) =>
  events.some((e) => e.eventId === eventId);

describe('batches racing with the same events in different environments', () => {
  it('claims each event for exactly one batch, reports other content against it and keeps the newest state, whatever the race', async () => {
    const p = await createPipeline();
    // Told each time a BatchGetItem (a settle's read of its orders) has been answered.
    let onRead = () => {};
    p.clients.dynamo.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        if (context.commandName === 'BatchGetItemCommand') onRead();
        return result;
      },
      { step: 'initialize', name: 'countReads' },
    );
    const claimant = (batchId: string) => ({ batchId, expiresAtSeconds: undefined, nowMs: 0 });

    await fc.assert(
      fc.asyncProperty(raceArb, async ({ pool, prior, racers }) => {
        const run = uniqueName('race');
        const eventOf = ({ index, copy }: Choice): GeneratedEvent => {
          const e = pool[index] ?? { order: 'o1', minute: 0, status: 'placed', cents: 0 };
          return {
            eventId: `e${index}`,
            orderId: `${run}-${e.order}`,
            customerId: 'C1',
            status: e.status,
            amount: ((e.cents + copy) / 100).toFixed(2),
            currency: 'EUR',
            eventTime: new Date(Date.UTC(2026, 9, 1, 9, e.minute)).toISOString(),
          };
        };

        const first = new DynamoOrderStore(p.clients.dynamo, p.tableName);
        const priorPlan = prior.length > 0 ? planOf(`${run}-prior`, prior.map(eventOf)) : undefined;
        if (priorPlan) await first.settle(priorPlan.orders, claimant(priorPlan.batch.batchId), 16);

        // Every racer reads its orders; none writes before all have read.
        const plans = racers.map((picks, r) => planOf(`${run}-r${r}`, picks.map(eventOf)));
        let reads = 0;
        const allRead = new Promise<void>((resolve) => {
          onRead = () => {
            if (++reads === plans.length) resolve();
          };
        });
        const settled: Settlement[][] = await Promise.all(
          plans.map((plan) =>
            // A store of its own: an environment of its own, sharing nothing in memory.
            new DynamoOrderStore(p.clients.dynamo, p.tableName).settle(
              plan.orders,
              claimant(plan.batch.batchId),
              16,
              allRead,
            ),
          ),
        );

        const claimed = new Map<string, OrderEvent>();
        for (const event of priorPlan?.orders.flat() ?? []) claimed.set(event.eventId, event);
        const raced = new Set(racers.flat().map((choice) => choice.index));
        for (const index of raced) {
          const eventId = `e${index}`;
          const owners = plans.flatMap((plan, r) => {
            const own = settled[r]?.flatMap((s) => s.ours).find((e) => e.eventId === eventId);
            return own ? [{ plan, event: own }] : [];
          });
          const earlier = claimed.get(eventId);
          expect(owners).toHaveLength(earlier ? 0 : 1);
          const winner = earlier ?? owners[0]?.event;
          const winnerBatch = earlier ? priorPlan?.batch.batchId : owners[0]?.plan.batch.batchId;
          if (!winner) throw new Error(`${eventId}: claimed by nobody`);
          claimed.set(eventId, winner);
          expect((await first.orderClaims(winner.orderId))?.claimOf(eventId)).toEqual({
            batchId: winnerBatch,
            digest: eventDigest(winner),
          });
          // Every other racer carrying it: a copy of the winner's content, or a conflict with it.
          plans.forEach((plan, r) => {
            const mine = plan.batch.events.find((e) => e.eventId === eventId);
            if (!mine || owners[0]?.plan === plan) return;
            const same = eventDigest(mine) === eventDigest(winner);
            const duplicates = (settled[r] ?? []).flatMap((x) => x.duplicates);
            const conflicts = (settled[r] ?? []).flatMap((x) => x.conflicts.map((c) => c.event));
            expect(holds(duplicates, eventId)).toBe(same);
            expect(holds(conflicts, eventId)).toBe(!same);
          });
        }

        // Each order holds the newest event of those claimed, with the content claimed.
        for (const orderId of new Set([...claimed.values()].map((e) => e.orderId))) {
          const newest = [...claimed.values()]
            .filter((e) => e.orderId === orderId)
            .reduce((a, b) => (isNewer(b, a) ? b : a));
          const stored = await first.orderClaims(orderId);
          expect(stored?.stateEventId).toBe(newest.eventId);
          expect(stored?.order.amount).toBe(newest.amount);
        }
      }),
      { numRuns: 40 },
    );
  });
});
