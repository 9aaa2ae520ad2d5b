import type { OrderEvent } from './schema.ts';

/**
 * Compares strings by their UTF-8 bytes, the order DynamoDB uses for keys and conditions
 * (`eventId < :eid`). JavaScript's `<` compares UTF-16 code units instead, and the two disagree
 * when a supplementary character (a surrogate pair, U+D800–U+DFFF) meets one in
 * U+E000–U+FFFF. UTF-8 byte order is code-point order, so at the first differing unit the
 * surrogates are moved above U+FFFF before comparing.
 */
export const compareUtf8 = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const rank = (c: number) => (c >= 0xd800 && c <= 0xdfff ? c + 0x10000 : c);
    return rank(x) - rank(y);
  }
  return a.length - b.length;
};

/**
 * Newest wins: the greater (event time, event id) pair, ids compared by UTF-8 bytes as the
 * table's condition compares them, so the winner depends neither on arrival order nor on how
 * the events were batched.
 */
export const isNewer = (
  a: Pick<OrderEvent, 'instant' | 'eventId'>,
  b: Pick<OrderEvent, 'instant' | 'eventId'>,
): boolean =>
  a.instant > b.instant || (a.instant === b.instant && compareUtf8(a.eventId, b.eventId) > 0);

/** What an order looks like to readers (the CLI, the expected files). */
export interface OrderView {
  readonly orderId: string;
  readonly customerId: string;
  readonly status: string;
  readonly amount: string;
  readonly currency: string;
  readonly eventTime: string;
}

/** The order readers list orders in: by order id (as JavaScript compares strings). */
export const byOrderId = (a: OrderView, b: OrderView): number =>
  a.orderId < b.orderId ? -1 : a.orderId > b.orderId ? 1 : 0;
