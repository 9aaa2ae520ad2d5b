/** `onceflow orders`: orders' newest state, through the customer index (never a table scan). */
import { type Command, InvalidArgumentError } from 'commander';
import { DynamoOrderReader } from '../../adapters/dynamo-order-reader.ts';
import { errorName } from '../../adapters/errors.ts';
import { counted, ordersTable } from '../../local/render.ts';
import { InvalidCursorError } from '../../shared/errors.ts';
import { byOrderId, type OrderView } from '../../shared/order-state.ts';
import { EntityIdSchema } from '../../shared/schema.ts';
import { describeOrder, inspectOrder } from '../order-history.ts';
import { bannedIdReason, json, run, target } from '../program.ts';
import { CliError } from '../target.ts';

const pageSize = (text: string): number => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    throw new InvalidArgumentError('give an integer from 1 to 1000');
  return n;
};

interface OrdersOptions {
  json?: boolean;
  events?: boolean;
  orderId?: string;
  customer?: string;
  limit?: number;
  after?: string;
}

export const register = (program: Command): void => {
  program
    .command('orders')
    .description('the newest state of orders: one, one customer’s, or every one, page by page')
    .option('--json', 'print JSON: [{orderId, customerId, status, amount, currency, eventTime}]')
    .option('--order-id <id>', 'one order only, read directly')
    .option(
      '--events',
      'with --order-id: every event the order counts, the batch that counts each, and which one its state holds',
    )
    .option('--customer <id>', 'this customer’s orders only (a query of the customer index)')
    .option('--limit <n>', 'at most n orders, then the cursor of the next page on stderr', pageSize)
    .option('--after <cursor>', 'the page after the one that printed this cursor')
    .addHelpText(
      'after',
      [
        '',
        'Example:',
        '  npx onceflow orders --json > orders.json',
        '  npx onceflow orders --order-id 1001',
        '  npx onceflow orders --order-id 1001 --events',
        '  npx onceflow orders --customer c-42 --limit 50',
        '  npx onceflow orders --limit 50 --after <cursor printed by the page before>',
      ].join('\n'),
    )
    .action(
      run(async (o: OrdersOptions) => {
        const banned = [
          o.orderId === undefined
            ? undefined
            : bannedIdReason(EntityIdSchema, 'order id', o.orderId),
          o.customer === undefined
            ? undefined
            : bannedIdReason(EntityIdSchema, 'customer id', o.customer),
        ].find((reason) => reason !== undefined);
        if (banned !== undefined) throw new CliError(banned);
        if (o.events && o.orderId === undefined)
          throw new CliError('--events lists one order’s events: give --order-id too');
        const t = await target();
        if (o.events && o.orderId !== undefined) {
          const report = await inspectOrder(t, o.orderId);
          if (!report) throw new CliError(`no order ${o.orderId}`);
          if (o.json) json([report]);
          else console.log(describeOrder(report));
          return 0;
        }
        const store = new DynamoOrderReader(t.clients.dynamo, t.output('TableName'));
        let orders: OrderView[];
        let next: string | undefined;
        if (o.orderId !== undefined) {
          const order = await store.getOrder(o.orderId);
          if (!order) throw new CliError(`no order ${o.orderId}`);
          orders = [order];
        } else {
          ({ orders, next } = await pages(store, o));
        }
        if (o.json) json(orders);
        else console.log(`${ordersTable(orders)}\n${counted(orders.length, 'order')}`);
        // On stderr, so that --json output stays one JSON document.
        if (next !== undefined) console.error(`more: --after ${next}`);
        return 0;
      }),
    );
};

/** With --limit, one page; without, every page (each of the index's default size). */
const pages = async (store: DynamoOrderReader, o: OrdersOptions) => {
  const request = { ...(o.customer === undefined ? {} : { customerId: o.customer }) };
  try {
    if (o.limit !== undefined)
      return await store.ordersPage({
        ...request,
        limit: o.limit,
        ...(o.after === undefined ? {} : { after: o.after }),
      });
    const orders: OrderView[] = [];
    let after = o.after;
    do {
      const page = await store.ordersPage({
        ...request,
        ...(after === undefined ? {} : { after }),
      });
      orders.push(...page.orders);
      after = page.next;
    } while (after !== undefined);
    orders.sort(byOrderId);
    return { orders, next: undefined };
  } catch (error) {
    if (error instanceof InvalidCursorError) throw new CliError(error.message, { cause: error });
    // A table from before the customer index (kept data, or a stack not yet updated).
    if (errorName(error) === 'ValidationException' && /index/i.test(String(error)))
      throw new CliError(
        `the table has no customer index (${String(error)}): deploy the current stack first`,
        { cause: error },
      );
    throw error;
  }
};
