/** `onceflow orders`: every order's newest state. */
import type { Command } from 'commander';
import { DynamoOrderStore } from '../../adapters/dynamo.ts';
import { ordersTable } from '../../local/render.ts';
import { json, run, target } from '../program.ts';

export const register = (program: Command): void => {
  program
    .command('orders')
    .description('the newest state of every order')
    .option('--json', 'print JSON: [{orderId, customerId, status, amount, currency, eventTime}]')
    .addHelpText('after', '\nExample:\n  npx onceflow orders --json > orders.json')
    .action(
      run(async (o: { json?: boolean }) => {
        const t = await target();
        const orders = await new DynamoOrderStore(
          t.clients.dynamo,
          t.output('TableName'),
        ).listOrders();
        if (o.json) json(orders);
        else console.log(`${ordersTable(orders)}\n${orders.length} orders`);
        return 0;
      }),
    );
};
