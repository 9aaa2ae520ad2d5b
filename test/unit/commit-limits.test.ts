/**
 * Every write a batch the contract admits plans is within DynamoDB's limits, decided from the
 * batch alone: at most 100 items per transaction and no item twice, expressions within 4 KB,
 * numbers within 38 digits, items far below 400 KB, counter items below 1 KB. A batch that
 * passes validation therefore never fails permanently after its claim.
 */
import { randomUUID } from 'node:crypto';
import type { AttributeValue, TransactWriteItemsCommandInput } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { commitPartRequest, ledgerItem } from '../../adapters/dynamo.ts';
import { itemBytes } from '../../adapters/dynamo-items.ts';
import {
  firstOrderItem,
  MAX_CLAIMS_PER_WRITE,
  MAX_REMOVALS_PER_WRITE,
  orderWriteRequest,
} from '../../adapters/dynamo-orders.ts';
import { settleOrder } from '../../shared/claims.ts';
import { claimedDeltas, planBatch } from '../../shared/ingest.ts';
import { validateBatch } from '../../shared/schema.ts';
import {
  everyCellOfOneHour,
  oneLongOrder,
  validBatchArbitrary,
  widestBatch,
} from '../support/bounds.ts';

const LONGEST_TABLE_NAME = 't'.repeat(255);
const KB = 1024;

const expressionsOf = (request: TransactWriteItemsCommandInput) =>
  (request.TransactItems ?? []).flatMap((item) => {
    const u = item.Update;
    return u ? [u.UpdateExpression ?? '', u.ConditionExpression ?? ''] : [];
  });

const numbersOf = (values: Record<string, AttributeValue> | undefined) =>
  Object.values(values ?? {}).flatMap((v) => (v.N ? [v.N] : (v.NS ?? [])));

const parse = (body: unknown) => {
  const result = validateBatch(body);
  if (!result.ok) throw new Error(`an invalid batch: ${result.detail}`);
  return result.batch;
};

const checkLimits = (body: unknown) => {
  const result = validateBatch(body);
  if (!result.ok) throw new Error(`the arbitrary made an invalid batch: ${result.detail}`);
  const plan = planBatch(result.batch, { counterShards: 100 });
  for (const [part] of plan.parts.entries()) {
    // Every event claimed: the largest a part's commit can be.
    const deltas = claimedDeltas(plan, part, plan.batch.events);
    expect(deltas).toEqual(plan.parts[part]);
    // The last part also completes the batch: it carries the totals item too.
    const completion =
      part === plan.parts.length - 1 ? { events: plan.batch.events.length } : undefined;
    const request = commitPartRequest(
      LONGEST_TABLE_NAME,
      plan,
      part,
      deltas,
      randomUUID(),
      completion,
    );
    const items = request.TransactItems ?? [];
    expect(items.length).toBeLessThanOrEqual(100);
    const keys = items.map((i) => JSON.stringify(i.Update?.Key));
    expect(new Set(keys).size).toBe(keys.length);
    for (const expression of expressionsOf(request)) {
      expect(Buffer.byteLength(expression)).toBeLessThanOrEqual(4 * KB);
    }
    expect(Buffer.byteLength(JSON.stringify(request))).toBeLessThanOrEqual(4 * KB * KB);
    for (const item of items.slice(1)) {
      const update = item.Update;
      for (const n of numbersOf(update?.ExpressionAttributeValues)) {
        expect(n.replace(/^0+/, '').length).toBeLessThanOrEqual(38);
      }
      // The largest this counter item can ever be: its key, and every attribute it names
      // holding a 38-digit number (21 bytes).
      const names = Object.values(update?.ExpressionAttributeNames ?? {});
      const worst = itemBytes(update?.Key) + names.reduce((s, name) => s + name.length + 21, 0);
      expect(worst).toBeLessThan(KB);
    }
  }
  expect(itemBytes(ledgerItem(plan, 4_102_444_800, 253_402_300_799_999))).toBeLessThan(KB);
  // An order's first item: its state and a claim per event. Everything in one batch fits far
  // below the item limit (later batches add claims; see the README's limits).
  const claimant = { batchId: plan.batch.batchId, expiresAtSeconds: 4_102_444_800, nowMs: 0 };
  const fresh = { newest: undefined, claimOf: () => undefined };
  for (const events of plan.orders) {
    expect(itemBytes(firstOrderItem(events, claimant))).toBeLessThan(64 * KB);
    for (let i = 0; i < events.length; i += MAX_CLAIMS_PER_WRITE) {
      const chunk = events.slice(i, i + MAX_CLAIMS_PER_WRITE);
      const settlement = settleOrder(fresh, claimant.batchId, chunk);
      const write = orderWriteRequest(
        LONGEST_TABLE_NAME,
        chunk[0]?.orderId ?? '',
        settlement,
        claimant,
      );
      expect(Buffer.byteLength(write.UpdateExpression ?? '')).toBeLessThanOrEqual(4 * KB);
      expect(Buffer.byteLength(write.ConditionExpression ?? '')).toBeLessThanOrEqual(4 * KB);
    }
  }
  return plan;
};

describe('the writes planned for a valid batch', () => {
  it('stay within every DynamoDB limit for any batch up to the contract’s bounds', () => {
    fc.assert(
      fc.property(validBatchArbitrary('b'), (body) => void checkLimits(body)),
      { numRuns: 60 },
    );
  });

  it('keep the widest order write, 50 claims, a new state and 100 removals, within 4 KB expressions', () => {
    const events = parse(JSON.parse(oneLongOrder('x', 1)[0]?.body ?? '')).events.slice(
      0,
      MAX_CLAIMS_PER_WRITE,
    );
    const settlement = settleOrder({ newest: undefined, claimOf: () => undefined }, 'b', events);
    expect(settlement.newClaims).toHaveLength(MAX_CLAIMS_PER_WRITE);
    const expired = Array.from({ length: MAX_REMOVALS_PER_WRITE }, (_, i) => `c:${i}`);
    const claimant = { batchId: 'b'.repeat(128), expiresAtSeconds: 4_102_444_800, nowMs: 0 };
    const write = orderWriteRequest(LONGEST_TABLE_NAME, 'o', settlement, claimant, expired);
    expect(Buffer.byteLength(write.UpdateExpression ?? '')).toBeLessThanOrEqual(4 * KB);
    expect(Buffer.byteLength(write.ConditionExpression ?? '')).toBeLessThanOrEqual(4 * KB);
  });

  it('stay within them for the widest batch and for every cell of an hour', () => {
    expect(checkLimits(JSON.parse(widestBatch('w').body)).parts).toHaveLength(6);
    for (const b of everyCellOfOneHour('c')) checkLimits(JSON.parse(b.body));
  });
});
