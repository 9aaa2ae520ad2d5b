/** `onceflow orders`: every order's newest state. */
import type { Command } from 'commander';
import { DynamoOrderStore } from '../../adapters/dynamo-orders.ts';
import { ordersTable } from '../../local/render.ts';
import type { OrderView } from '../../shared/order-state.ts';
import { json, run, target } from '../program.ts';
import { CliError } from '../target.ts';

export const register = (program: Command): void => {
  program
    .command('orders')
    .description('the newest state of every order')
    .option('--json', 'print JSON: [{orderId, customerId, status, amount, currency, eventTime}]')
    .option('--order-id <id>', 'one order only, read directly (no scan)')
    .addHelpText(
      'after',
      '\nExample:\n  npx onceflow orders --json > orders.json\n  npx onceflow orders --order-id 1001',
    )
    .action(
      run(async (o: { json?: boolean; orderId?: string }) => {
        const t = await target();
        const store = new DynamoOrderStore(t.clients.dynamo, t.output('TableName'));
        let orders: OrderView[];
        if (o.orderId === undefined) orders = await store.listOrders();
        else {
          const order = await store.getOrder(o.orderId);
          if (!order) throw new CliError(`no order ${o.orderId}`);
          orders = [order];
        }
        if (o.json) json(orders);
        else console.log(`${ordersTable(orders)}\n${orders.length} orders`);
        return 0;
      }),
    );
};
