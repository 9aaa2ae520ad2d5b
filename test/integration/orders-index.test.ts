import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DynamoOrderReader } from '../../adapters/dynamo-order-reader.ts';
import { InvalidCursorError } from '../../shared/errors.ts';
import type { OrderView } from '../../shared/order-state.ts';
import { expectedOrders, seedBatches } from '../support/fixtures.ts';
import { createPipeline, uniqueName } from '../support/pipeline.ts';

/** Every order, page after page of `limit`, as an operator pages with `--limit` and `--after`. */
const everyPage = async (store: DynamoOrderReader, limit: number, customerId?: string) => {
  const pages: OrderView[][] = [];
  let after: string | undefined;
  do {
    const page = await store.ordersPage({
      limit,
      ...(customerId === undefined ? {} : { customerId }),
      ...(after === undefined ? {} : { after }),
    });
    expect(page.orders.length).toBeLessThanOrEqual(limit);
    pages.push(page.orders);
    after = page.next;
  } while (after !== undefined);
  return pages;
};

const ids = (orders: readonly OrderView[]) => orders.map((o) => o.orderId).sort();

describe('orders through the customer index', () => {
  it('pages through every order exactly once whatever the page size, reading no other item', async () => {
    const p = await createPipeline();
    // The reference stream, plus 40 orders of one more customer: more orders than any page.
    const extra = Array.from({ length: 4 }, (_, b) =>
      JSON.stringify({
        batchId: uniqueName(`many-${b}`),
        events: Array.from({ length: 10 }, (_, i) => ({
          eventId: `m-${b}-${i}`,
          orderId: `m-${b * 10 + i}`,
          customerId: 'C-many',
          status: 'placed',
          amount: '1.00',
          currency: 'EUR',
          eventTime: '2026-10-01T12:00:00Z',
        })),
      }),
    );
    await p.deliverUntilDone([...seedBatches(), ...extra]);
    const store = new DynamoOrderReader(p.admin.dynamo, p.tableName);
    const all = await store.listOrders();
    expect(all).toHaveLength(expectedOrders().length + 40);

    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 60 }), async (limit) => {
        const pages = await everyPage(store, limit);
        expect(ids(pages.flat())).toEqual(ids(all));
        // Each page is complete in itself: full pages until the last.
        for (const page of pages.slice(0, -1)) expect(page).toHaveLength(limit);
        expect(pages.flat().sort((a, b) => (a.orderId < b.orderId ? -1 : 1))).toEqual(all);
      }),
      { numRuns: 15 },
    );
  });

  it('reads one customer’s orders only, and refuses a cursor it did not hand out', async () => {
    const p = await createPipeline();
    await p.deliverUntilDone(seedBatches());
    const store = new DynamoOrderReader(p.admin.dynamo, p.tableName);
    for (const customerId of new Set(expectedOrders().map((o) => o.customerId))) {
      const expected = expectedOrders().filter((o) => o.customerId === customerId);
      expect(ids((await everyPage(store, 1, customerId)).flat())).toEqual(ids(expected));
      expect((await store.ordersPage({ customerId })).orders).toEqual(expected);
    }
    expect((await store.ordersPage({ customerId: 'nobody' })).orders).toEqual([]);
    await expect(store.ordersPage({ after: 'not-a-cursor' })).rejects.toThrow(InvalidCursorError);
    await expect(
      store.ordersPage({ after: Buffer.from('["a","b"]').toString('base64url') }),
    ).rejects.toThrow(InvalidCursorError);
  });
});
