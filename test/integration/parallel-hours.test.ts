/**
 * Hours are independent of one another, so whatever publishes several does so concurrently: the
 * aggregate function with one batch of its coalescing (FIFO) queue (each hour's messages still
 * in order, a failure failing only the rest of its own hour's messages), and `reconcile` and
 * `verify` over an interval. Against DynamoDB Local and fauxqs.
 */
import { randomUUID } from 'node:crypto';
import { FullBatchFailureError } from '@aws-lambda-powertools/batch';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { aggregateDependencies } from '../../adapters/wiring.ts';
import { reconcile, verify } from '../../cli/commands/reconcile.ts';
import type { Target } from '../../cli/target.ts';
import { createAggregateHandler } from '../../functions/aggregate-hours.ts';
import { lambdaContext } from '../../local/lambda-context.ts';
import { waitFor } from '../../local/net.ts';
import { toSqsEvent, toSqsRecord } from '../../local/sqs-event.ts';
import type { CounterReader } from '../../shared/aggregator.ts';
import { hourObjectKey } from '../../shared/keys.ts';
import { parseHour } from '../../shared/time.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { batch, DAY } from '../support/hours.ts';
import { holdUntilConcurrent } from '../support/overlap.ts';
import { cliTarget, createPipeline, type Pipeline } from '../support/pipeline.ts';

const HOURS = ['06', '07', '08', '09', '10'].map((h) => `${DAY}T${h}:00:00Z`);
const QUEUE_ARN = 'arn:aws:sqs:us-east-1:000000000000:aggregate.fifo';

/** A pipeline whose counters hold one event in each of HOURS (no hour published yet). */
const pipelineWithHours = async () => {
  const p = await createPipeline();
  await p.deliverUntilDone([batch(...HOURS.map((h) => h.slice(11, 16)))]);
  return p;
};

/** An aggregate message of the hour's group, as the event source mapping passes it. */
const record = (hour: string, body = JSON.stringify({ hour })) =>
  toSqsRecord(
    {
      MessageId: randomUUID(),
      ReceiptHandle: randomUUID(),
      Body: body,
      Attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: String(Date.now()),
        MessageGroupId: hour,
        MessageDeduplicationId: randomUUID(),
      },
    },
    QUEUE_ARN,
    'us-east-1',
  );

/** The aggregate handler over the pipeline's table and bucket, its counter reads replaced. */
const handlerWith = (p: Pipeline, counters: (real: CounterReader) => CounterReader) => {
  const dependencies = aggregateDependencies(
    { tableName: p.tableName, bucketName: p.bucketName },
    p.clients,
  );
  const ports = { ...dependencies.ports, counters: counters(dependencies.ports.counters) };
  const handler = createAggregateHandler({ ...dependencies, ports });
  return (records: ReturnType<typeof record>[]) =>
    handler(toSqsEvent(records), lambdaContext('aggregate-hours', 30_000));
};

const publishedHours = async (p: Pipeline) => (await p.hourly()).map((h) => h.hour);

describe('an aggregate batch from the coalescing FIFO queue', () => {
  it('publishes the hours of one batch concurrently when each hour is a message group of its own', async () => {
    const p = await pipelineWithHours();
    // Every hour's counter read waits until all five have started: one hour at a time would
    // never get there, and fail each read at the deadline.
    const started = new Set<string>();
    const handle = handlerWith(p, (real) => ({
      readHour: async (hour) => {
        started.add(hour);
        await waitFor(async () => started.size === HOURS.length, {
          timeoutMs: DEADLINE_MS,
          what: 'every hour of the batch to be read at once',
        });
        return real.readHour(hour);
      },
    }));
    const response = await handle(HOURS.map((hour) => record(hour)));
    expect(response.batchItemFailures).toEqual([]);
    expect(await publishedHours(p)).toEqual(HOURS);
  });

  it('publishes an hour once for all of its messages in one batch', async () => {
    const p = await pipelineWithHours();
    const [h06, h07] = HOURS as [string, string];
    const reads: string[] = [];
    const handle = handlerWith(p, (real) => ({
      readHour: async (hour) => {
        reads.push(hour);
        return real.readHour(hour);
      },
    }));
    const response = await handle([record(h06), record(h07), record(h06), record(h06)]);
    expect(response.batchItemFailures).toEqual([]);
    expect(reads.sort()).toEqual([h06, h07]);
    expect(await publishedHours(p)).toEqual([h06, h07]);
  });

  it('returns the rest of a failed hour’s group unprocessed and publishes the other hours when one hour fails', async () => {
    const p = await pipelineWithHours();
    const [h06, h07, h08] = HOURS as [string, string, string];
    const reads: string[] = [];
    const handle = handlerWith(p, (real) => ({
      readHour: async (hour) => {
        reads.push(hour);
        if (hour === h07) throw new Error('counters unavailable');
        return real.readHour(hour);
      },
    }));
    // Behind the failed message in its group, one the function would otherwise quarantine:
    // processed out of order, it would be acknowledged and its reject written.
    const failing = record(h07);
    const behind = record(h07, 'not json');
    const batch = [record(h06), failing, record(h08), behind];
    const response = await handle(batch);
    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(
      [failing.messageId, behind.messageId].sort(),
    );
    expect(await p.rejects()).toEqual([]);
    expect(reads.filter((h) => h === h07)).toEqual([h07]);
    expect(await publishedHours(p)).toEqual([h06, h08]);
  });

  it('fails the whole invocation when every hour of the batch fails', async () => {
    const p = await pipelineWithHours();
    const handle = handlerWith(p, () => ({
      readHour: async () => {
        throw new Error('counters unavailable');
      },
    }));
    await expect(handle(HOURS.map((hour) => record(hour)))).rejects.toThrow(FullBatchFailureError);
    expect(await publishedHours(p)).toEqual([]);
  });
});

/**
 * The pipeline as the CLI sees it, through clients whose first `held` reads of an hour's counters
 * (one query each) wait until that many have started.
 */
const targetReadingAtOnce = (p: Pipeline, held: number): Target => {
  holdUntilConcurrent(p.faults, 'Query', held);
  return cliTarget(p);
};

describe('reconcile and verify over an interval', () => {
  it('reconciles the hours of an interval concurrently, publishing each', async () => {
    const p = await pipelineWithHours();
    const fromMs = parseHour(HOURS[0] ?? '') ?? 0;
    const plans = await reconcile(
      targetReadingAtOnce(p, 3),
      { fromMs, toMs: fromMs + HOURS.length * 3_600_000 },
      false,
    );
    expect(plans.map((plan) => [plan.hour, plan.action])).toEqual(
      HOURS.map((hour) => [hour, 'write']),
    );
    expect(await publishedHours(p)).toEqual(HOURS);
  });

  it('verifies the hours concurrently and reports each difference in hour order', async () => {
    const p = await pipelineWithHours();
    await p.drainAggregates();
    // Two hours the pipeline has not published: applied, but their notifications dropped.
    await p.deliverUntilDone([batch('08:10'), batch('10:10')]);
    const { checked, differences } = await verify(targetReadingAtOnce(p, 3));
    expect(checked).toBe(HOURS.length);
    expect(differences.map((d) => [d.hour, d.problem])).toEqual([
      [HOURS[2], 'different'],
      [HOURS[4], 'different'],
    ]);
    // Over [07:00, 10:00): its first hour is in, its end hour is not.
    const fromMs = parseHour(HOURS[1] ?? '') ?? 0;
    const within = await verify(cliTarget(p), { fromMs, toMs: fromMs + 3 * 3_600_000 });
    expect(within.checked).toBe(3);
    expect(within.differences.map((d) => d.hour)).toEqual([HOURS[2]]);
  });

  it('reports an hour object that is not an aggregate as unreadable, which reconcile rewrites', async () => {
    const p = await pipelineWithHours();
    await p.drainAggregates();
    const hour = HOURS[3] ?? '';
    // Cut short (a hand edit, a copy interrupted): not JSON.
    await p.admin.s3.send(
      new PutObjectCommand({ Bucket: p.bucketName, Key: hourObjectKey(hour), Body: '{"hour":' }),
    );
    const found = await verify(cliTarget(p));
    expect(found.differences).toEqual([
      { hour, problem: 'unreadable-object', detail: 'the object is not a valid aggregate' },
    ]);
    const fromMs = parseHour(hour) ?? 0;
    const plans = await reconcile(cliTarget(p), { fromMs, toMs: fromMs + 3_600_000 }, false);
    expect(plans.map((plan) => [plan.hour, plan.action])).toEqual([[hour, 'write']]);
    expect((await verify(cliTarget(p))).differences).toEqual([]);
  });
});
