/**
 * Reading orders: one by id, a page through the customer index, or every order (for operators).
 * The item layout is `dynamo-orders.ts`'s.
 */
import { type DynamoDBClient, QueryCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import * as v from 'valibot';
import { InvalidCursorError } from '../shared/errors.ts';
import { byOrderId, type OrderView } from '../shared/order-state.ts';
import {
  batchGet,
  CUSTOMER_ATTRIBUTE,
  CUSTOMER_INDEX,
  CUSTOMER_SORT_ATTRIBUTE,
  getItem,
  type Item,
  ORDER_PK_PREFIX,
  orderKey,
  readString,
  S,
} from './dynamo-items.ts';

/** An order item's state as readers see it. */
export const toOrderView = (item: Item): OrderView => ({
  orderId: readString(item, 'orderId'),
  customerId: readString(item, 'customerId'),
  status: readString(item, 'status'),
  amount: readString(item, 'amount'),
  currency: readString(item, 'currency'),
  eventTime: readString(item, 'eventTime'),
});

const VIEW_ATTRIBUTES = [
  'orderId',
  'customerId',
  'status',
  'amount',
  'currency',
  'eventTime',
] as const;

/** One page of orders, and the cursor of the next one when there is more. */
export interface OrdersPage {
  readonly orders: OrderView[];
  readonly next?: string;
}

export interface OrdersPageOptions {
  /** Only this customer's orders. Default: every order. */
  readonly customerId?: string;
  /** At most this many orders (1–1000). Default 100. */
  readonly limit?: number;
  /** The `next` cursor of the page before. */
  readonly after?: string;
}

/** A page cursor: the index's last key, opaque to callers (base64url of its four strings). */
const INDEX_KEY = ['pk', 'sk', CUSTOMER_ATTRIBUTE, CUSTOMER_SORT_ATTRIBUTE] as const;
const CursorSchema = v.tuple([v.string(), v.string(), v.string(), v.string()]);

const encodeCursor = (key: Item): string =>
  Buffer.from(JSON.stringify(INDEX_KEY.map((name) => key[name]?.S ?? ''))).toString('base64url');

const decodeCursor = (cursor: string): Item => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch (error) {
    throw new InvalidCursorError(`${cursor}: not a cursor onceflow handed out`, { cause: error });
  }
  const result = v.safeParse(CursorSchema, parsed);
  if (!result.success) throw new InvalidCursorError(`${cursor}: not a cursor onceflow handed out`);
  const [pk, sk, customerId, orderId] = result.output;
  return {
    pk: S(pk),
    sk: S(sk),
    [CUSTOMER_ATTRIBUTE]: S(customerId),
    [CUSTOMER_SORT_ATTRIBUTE]: S(orderId),
  };
};

export class DynamoOrderReader {
  protected readonly client: DynamoDBClient;
  protected readonly table: string;

  constructor(client: DynamoDBClient, table: string) {
    this.client = client;
    this.table = table;
  }

  /** One order's current state (a GetItem), or undefined when the order is unknown. */
  async getOrder(orderId: string): Promise<OrderView | undefined> {
    const item = await getItem(this.client, this.table, orderKey(orderId));
    return item ? toOrderView(item) : undefined;
  }

  /**
   * A page of orders, read through the customer index (it holds only orders, keys only) and
   * then by key: a customer's orders are one query, every order a scan of the index, never of
   * the table. Sorted by order id within the page. The index is eventually consistent: an order
   * first written a moment ago may show on the next call.
   */
  async ordersPage(options: OrdersPageOptions = {}): Promise<OrdersPage> {
    const limit = options.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new RangeError(`limit ${limit}: give an integer from 1 to 1000`);
    const common = {
      TableName: this.table,
      IndexName: CUSTOMER_INDEX,
      Limit: limit,
      ...(options.after === undefined ? {} : { ExclusiveStartKey: decodeCursor(options.after) }),
    };
    const page = await this.client.send(
      options.customerId === undefined
        ? new ScanCommand(common)
        : new QueryCommand({
            ...common,
            KeyConditionExpression: '#c = :c',
            ExpressionAttributeNames: { '#c': CUSTOMER_ATTRIBUTE },
            ExpressionAttributeValues: { ':c': S(options.customerId) },
          }),
    );
    const keys = (page.Items ?? []).map((item) => ({ pk: item.pk ?? S(''), sk: item.sk ?? S('') }));
    const items = await batchGet(this.client, this.table, keys, VIEW_ATTRIBUTES);
    return {
      orders: items.map(toOrderView).sort(byOrderId),
      ...(page.LastEvaluatedKey ? { next: encodeCursor(page.LastEvaluatedKey) } : {}),
    };
  }

  /** Every order's current state, sorted by order id (a scan: for operators, not hot paths). */
  async listOrders(): Promise<OrderView[]> {
    const orders: OrderView[] = [];
    let startKey: Item | undefined;
    do {
      const page = await this.client.send(
        new ScanCommand({
          TableName: this.table,
          ConsistentRead: true,
          FilterExpression: 'begins_with(pk, :prefix)',
          ExpressionAttributeValues: { ':prefix': S(ORDER_PK_PREFIX) },
          ProjectionExpression: 'orderId, customerId, #s, amount, currency, eventTime',
          ExpressionAttributeNames: { '#s': 'status' },
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      for (const item of page.Items ?? []) orders.push(toOrderView(item));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return orders.sort(byOrderId);
  }
}
