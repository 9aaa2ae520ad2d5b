/**
 * The local demo: the reference stream through the running stack, with one batch delivered
 * twice and one invocation crashed right after its DynamoDB commit; then the result, compared
 * with the expected files.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import { DynamoOrderReader } from '../adapters/dynamo-order-reader.ts';
import { S3Store } from '../adapters/s3.ts';
import { sendBodies } from '../adapters/sqs.ts';
import { type HourAggregate, HourAggregateSchema } from '../shared/aggregate.ts';
import { FinalizerRunSchema } from '../shared/finalizer.ts';
import type { OrderView } from '../shared/order-state.ts';
import { describeFinalizerRun, eventsChart, hourlyTable, ordersTable } from './render.ts';
import type { LocalRuntime } from './runtime.ts';

export const SEED_DIR = join(import.meta.dirname, '..', 'test', 'fixtures', 'seed-orders');

export interface DemoResult {
  readonly ok: boolean;
  readonly orders: readonly OrderView[];
  readonly hours: readonly HourAggregate[];
  readonly differences: readonly string[];
}

export interface DemoIo {
  /** Prints a line (or a block). */
  readonly print: (text: string) => void;
  /** Reports progress while the stack works: messages settled out of those sent. */
  readonly progress?: (settled: number, total: number) => void;
}

const readLines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');

/** The reference stream's expected orders, with their fields in the order the readers list them. */
export const ExpectedOrdersSchema = v.array(
  v.object({
    orderId: v.string(),
    customerId: v.string(),
    status: v.string(),
    amount: v.string(),
    currency: v.string(),
    eventTime: v.string(),
  }),
);

/** The reference stream's expected hours: what of an hour object the demo compares. */
export const ExpectedHoursSchema = v.array(
  v.pick(HourAggregateSchema, ['hour', 'events', 'byStatus']),
);

export const runDemo = async (runtime: LocalRuntime, io: DemoIo): Promise<DemoResult> => {
  const { outputs } = runtime.stack;
  const ordersQueue = outputs.OrdersQueueUrl;
  const table = outputs.TableName;
  const bucket = outputs.BucketName;
  if (!ordersQueue || !table || !bucket)
    throw new Error('the stack does not output OrdersQueueUrl, TableName and BucketName');
  const batches = readLines(join(SEED_DIR, 'batches.ndjson'));
  const expected = (file: string) => JSON.parse(readFileSync(join(SEED_DIR, file), 'utf8'));
  const expectedOrders = v.parse(ExpectedOrdersSchema, expected('expected-orders.json'));
  const expectedHours = v.parse(ExpectedHoursSchema, expected('expected-hourly.json'));

  // One ingest invocation dies right after its commit: its messages come back and must be recognised.
  const ingest = runtime.stack.functions.find(
    (f) => f.environment.AGGREGATE_QUEUE_URL !== undefined,
  );
  // Crashes count from here: a runtime used before the demo may have fired others.
  const crashesBefore = runtime.crashes.length;
  runtime.addCrash({
    phase: 'after',
    when: (call, fn) => call.action === 'TransactWriteItems' && fn === ingest,
  });
  const bodies = [...batches, batches[1] ?? ''];
  await sendBodies(runtime.clients.sqs, ordersQueue, bodies);
  io.print(`sent ${batches.length} batches from seed-orders, and batch 2 a second time`);

  const queues = runtime.stack.mappings.flatMap((m) =>
    runtime.stack.queues.filter((q) => q.logicalId === m.queueLogicalId),
  );
  const report = setInterval(async () => {
    const q = await runtime.clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: ordersQueue,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    const left =
      Number(q.Attributes?.ApproximateNumberOfMessages) +
      Number(q.Attributes?.ApproximateNumberOfMessagesNotVisible);
    io.progress?.(bodies.length - left, bodies.length);
  }, 100);
  try {
    await runtime.drain({ timeoutMs: 45_000 });
  } finally {
    clearInterval(report);
  }
  io.progress?.(bodies.length, bodies.length);
  const crashes = runtime.crashes.slice(crashesBefore);
  io.print(`drained ${queues.length} queues; crashes injected: ${crashes.join(', ') || 'none'}`);

  // The finalizer's rule runs every few minutes; the demo runs it once now, as the rule would.
  const finalizer = runtime.stack.schedules.find((s) =>
    s.functionLogicalId.startsWith('FinalizeHours'),
  );
  if (finalizer) {
    const run = v.safeParse(
      FinalizerRunSchema,
      await runtime.runSchedule(finalizer.functionLogicalId),
    );
    if (run.success) io.print(describeFinalizerRun(run.output));
  }

  const orders = await new DynamoOrderReader(runtime.clients.dynamo, table).listOrders();
  const hours = await new S3Store(runtime.clients.s3, bucket).listAggregates();
  io.print(`\nOrders (newest event wins)\n${ordersTable(orders)}`);
  io.print(`\nHourly aggregates (S3 ${bucket}/aggregates/hourly/)\n${hourlyTable(hours)}`);
  io.print(`\nEvents per hour\n${eventsChart(hours)}`);

  const differences: string[] = [];
  if (JSON.stringify(orders) !== JSON.stringify(expectedOrders))
    differences.push('orders differ from expected-orders.json');
  const essence = hours.map(({ hour, events, byStatus }) => ({ hour, events, byStatus }));
  if (JSON.stringify(essence) !== JSON.stringify(expectedHours))
    differences.push('hourly aggregates differ from expected-hourly.json');
  if (crashes.length !== 1)
    differences.push(
      `expected one injected crash, saw ${crashes.length}${crashes.length > 0 ? `: ${crashes.join(', ')}` : ''}`,
    );
  io.print(
    differences.length === 0
      ? '\n✔ orders and hourly aggregates equal the expected results: every batch counted once, the duplicate and the crashed delivery included'
      : `\n✘ ${differences.join('; ')}`,
  );
  return { ok: differences.length === 0, orders, hours, differences };
};
