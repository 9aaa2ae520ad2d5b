import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExpectedHoursSchema, ExpectedOrdersSchema } from '../../local/demo.ts';
import type { OrderView } from '../../shared/order-state.ts';
import { parseJson } from './json.ts';
import type { HourView } from './pipeline.ts';

const dir = join(import.meta.dirname, '..', 'fixtures', 'seed-orders');

/** The reference stream: four batches, one SQS body per line. */
export const seedBatches = (): string[] =>
  readFileSync(join(dir, 'batches.ndjson'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
export const expectedOrders = (): OrderView[] =>
  parseJson(ExpectedOrdersSchema, readFileSync(join(dir, 'expected-orders.json'), 'utf8'));
export const expectedHourly = (): HourView[] =>
  parseJson(ExpectedHoursSchema, readFileSync(join(dir, 'expected-hourly.json'), 'utf8'));
