import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lambdaContext } from '../../local/lambda-context.ts';
import { toSqsEvent, toSqsRecord } from '../../local/sqs-event.ts';
import { expectedHourly, expectedOrders, seedBatches } from '../support/fixtures.ts';
import { createPipeline } from '../support/pipeline.ts';

describe('the deployed entry points', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it('configure themselves from the environment and apply the reference stream', async () => {
    const p = await createPipeline();
    for (const [name, value] of Object.entries(p.env)) vi.stubEnv(name, value);
    const ingest = await import('../../functions/ingest-orders.ts');
    const records = seedBatches().map((body) =>
      toSqsRecord(
        { MessageId: randomUUID(), ReceiptHandle: randomUUID(), Body: body },
        'arn:aws:sqs:us-east-1:000000000000:orders',
        'us-east-1',
      ),
    );
    const res = await ingest.handler(toSqsEvent(records), lambdaContext('ingest-orders', 30_000));
    expect(res.batchItemFailures).toEqual([]);
    await p.drainAggregates();
    expect(await p.orders()).toEqual(expectedOrders());
    expect(await p.hourly()).toEqual(expectedHourly());
  });

  it('fail every message with a configuration error naming the missing variable', async () => {
    vi.stubEnv('TABLE_NAME', '');
    const aggregate = await import('../../functions/aggregate-hours.ts');
    const record = toSqsRecord(
      { MessageId: 'm-1', Body: '{"hour":"2026-10-01T09:00:00Z"}' },
      'arn',
      'us-east-1',
    );
    await expect(
      aggregate.handler(toSqsEvent([record]), lambdaContext('aggregate-hours', 30_000)),
    ).rejects.toThrow(/TABLE_NAME: is required/);
  });
});
