import { randomUUID } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lambdaContext } from '../../local/lambda-context.ts';
import { waitFor } from '../../local/net.ts';
import { toSqsEvent, toSqsRecord } from '../../local/sqs-event.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { expectedHourly, expectedOrders, seedBatches } from '../support/fixtures.ts';
import { JsonObjectSchema, parseJson } from '../support/json.ts';
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

  it('trace the handler and every AWS call to the X-Ray daemon when tracing is enabled', async () => {
    // The X-Ray daemon Lambda runs beside a traced function: a UDP socket receiving segments.
    const daemon = createSocket('udp4');
    const documents: Record<string, unknown>[] = [];
    daemon.on('message', (datagram) => {
      // Each datagram: a header line, then one (sub)segment document.
      const [, body] = datagram.toString('utf8').split('\n', 2);
      if (body) documents.push(parseJson(JsonObjectSchema, body));
    });
    await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
    try {
      const p = await createPipeline();
      const traceId = `1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replaceAll('-', '').slice(0, 24)}`;
      for (const [name, value] of Object.entries({
        ...p.env,
        POWERTOOLS_TRACE_ENABLED: 'true',
        // What Lambda sets in a traced function's environment.
        AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
        LAMBDA_TASK_ROOT: '/var/task',
        AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemon.address().port}`,
        AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
        _HANDLER: 'index.handler',
        _X_AMZN_TRACE_ID: `Root=${traceId};Parent=53995c3f42cd8ad8;Sampled=1`,
      }))
        vi.stubEnv(name, value);
      // Evaluated afresh (the pipeline helper imported it untraced): tracing is decided at init.
      vi.resetModules();
      const ingest = await import('../../functions/ingest-orders.ts');
      const [body] = seedBatches();
      const record = toSqsRecord(
        { MessageId: randomUUID(), ReceiptHandle: randomUUID(), Body: body ?? '' },
        'arn:aws:sqs:us-east-1:000000000000:orders',
        'us-east-1',
      );
      const res = await ingest.handler(
        toSqsEvent([record]),
        lambdaContext('ingest-orders', 30_000),
      );
      expect(res.batchItemFailures).toEqual([]);

      const inTrace = () => documents.filter((d) => d.trace_id === traceId);
      const services = () => new Set(inTrace().map((d) => d.name));
      // The handler's subsegment, and the SDK calls to each service it used.
      await waitFor(
        () => ['## index.handler', 'DynamoDB', 'S3', 'SQS'].every((n) => services().has(n)),
        {
          timeoutMs: DEADLINE_MS,
          what: 'subsegments of the handler and of its DynamoDB, S3 and SQS calls',
        },
      );
      const operations = inTrace()
        .filter((d) => d.namespace === 'aws')
        .map((d) => `${String(d.name)}.${String((d.aws as { operation?: string }).operation)}`);
      expect(operations).toEqual(
        expect.arrayContaining(['DynamoDB.PutItem', 'S3.PutObject', 'SQS.SendMessageBatch']),
      );
    } finally {
      daemon.close();
    }
  });

  it.each([
    {
      name: 'ingest-orders',
      load: () => import('../../functions/ingest-orders.ts'),
      body: '{"batchId":"b-1","events":[]}',
    },
    {
      name: 'aggregate-hours',
      load: () => import('../../functions/aggregate-hours.ts'),
      body: '{"hour":"2026-10-01T09:00:00Z"}',
    },
  ])(
    '$name fails its invocation with a configuration error naming the missing variable',
    async ({ name, load, body }) => {
      vi.stubEnv('TABLE_NAME', '');
      const fn = await load();
      const record = toSqsRecord({ MessageId: 'm-1', Body: body }, 'arn', 'us-east-1');
      // The invocation's own error, not a failure of each message (which Powertools would report
      // as "all records failed", naming nothing).
      await expect(fn.handler(toSqsEvent([record]), lambdaContext(name, 30_000))).rejects.toThrow(
        /TABLE_NAME: is required/,
      );
    },
  );
});
