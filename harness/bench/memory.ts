/**
 * Peak memory of each function on the largest valid input: a fresh environment (the deployed
 * bundle in its own Node 24 process, as `runFresh` runs it) given the largest batch its event
 * source mapping can deliver. Ingest: 10 bodies of 500 events each, ids at their 128-character
 * limit, padded to the size that fills Lambda's 6 MB invocation payload (ten bodies at the
 * queue's 1 MiB maximum never reach a function together: the mapping invokes once the payload
 * reaches 6 MB); half spread one event per hour (the widest commit), half packed into one hour
 * each, every event a cell of its own (currency × status). Aggregate: 10 hours, half of them
 * those full ones.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL_REGION } from '../../local/emulators.ts';
import { INVOKE_PAYLOAD_BYTES, LAMBDA_MAX_TIMEOUT_MS } from '../../local/lambda-quotas.ts';
import { eventsWithinPayload, toSqsEvent, toSqsRecord } from '../../local/sqs-event.ts';
import { provisionStackCopy, type StackCopy } from '../../local/stack-copy.ts';
import { CURRENCIES, currencyExponent } from '../../shared/currencies.ts';
import { MAX_EVENTS_PER_BATCH, ORDER_STATUSES } from '../../shared/schema.ts';
import { functionOf, runFresh } from './cold-start.ts';
import { unique } from './deliver.ts';

const HOUR = 3_600_000;
const START = Date.parse('2026-10-01T00:00:00Z');
const MESSAGES_PER_INVOCATION = 10;

export interface MemoryUse {
  readonly configuredMb: number;
  /** The largest peak RSS over the samples. */
  readonly peakRssMb: number;
  /** Configured memory over peak RSS. */
  readonly headroom: number;
}

const id = (prefix: string, n: number) => `${prefix}-${n}-`.padEnd(128, 'x');
const amount = (currency: string, n: number) => {
  const exponent = currencyExponent(currency) ?? 2;
  return exponent === 0 ? String(n) : `${n}.${'7'.repeat(exponent)}`;
};

/**
 * One valid body of `maxBytes` bytes (padded with spaces): 500 events, spread one per hour from
 * the start, or all in hour `packedHour`, each with a currency and status of its own there.
 */
const largestBody = (prefix: string, maxBytes: number, packedHour?: number) => {
  const events = Array.from({ length: MAX_EVENTS_PER_BATCH }, (_, i) => {
    const currency = CURRENCIES[i % CURRENCIES.length] ?? 'USD';
    return {
      eventId: id(`${prefix}e`, i),
      orderId: id(`${prefix}o`, i),
      customerId: id(`${prefix}c`, i % 50),
      status: ORDER_STATUSES[i % ORDER_STATUSES.length] ?? 'placed',
      amount: amount(currency, i),
      currency,
      eventTime: new Date(
        packedHour === undefined ? START + i * HOUR : START + packedHour * HOUR + (i % 3600) * 1000,
      )
        .toISOString()
        .replace('.000Z', 'Z'),
    };
  });
  const json = JSON.stringify({ batchId: prefix, events });
  return `${json}${' '.repeat(Math.max(0, maxBytes - Buffer.byteLength(json)))}`;
};

const sqsEvent = (copy: StackCopy, queue: 'orders' | 'aggregate', bodies: readonly string[]) =>
  toSqsEvent(
    bodies.map((body) =>
      toSqsRecord(
        { MessageId: unique('m'), ReceiptHandle: unique('r'), Body: body },
        copy.queues[queue].arn,
        LOCAL_REGION,
      ),
    ),
  );

/**
 * Ten of the largest bodies, each as large as lets the whole event stay within the payload
 * limit (their quotes are escaped in the event, so a body takes more room there than alone).
 */
const largestDeliverable = (copy: StackCopy, maxBodyBytes: number) => {
  const prefixes = Array.from({ length: MESSAGES_PER_INVOCATION }, (_, m) => unique(`largest${m}`));
  const start = Math.min(maxBodyBytes, Math.floor(INVOKE_PAYLOAD_BYTES / MESSAGES_PER_INVOCATION));
  for (let bytes = start; bytes > 0; bytes -= 4096) {
    const event = sqsEvent(
      copy,
      'orders',
      prefixes.map((prefix, m) => largestBody(prefix, bytes, m % 2 ? m : undefined)),
    );
    if (eventsWithinPayload(event.Records).length === 1) return event;
  }
  throw new Error('no batch of the largest bodies fits the invocation payload');
};

/** Peak RSS of ingest and aggregate over `samples` fresh environments each. */
export const measureMemory = async (options: {
  readonly endpoint: string;
  readonly assemblyDir: string;
  readonly samples: number;
}): Promise<Record<string, MemoryUse>> => {
  const work = mkdtempSync(join(tmpdir(), 'onceflow-memory-'));
  try {
    const peaks = { IngestOrders: 0, AggregateHours: 0 };
    let configured = { IngestOrders: 0, AggregateHours: 0 };
    for (let sample = 0; sample < options.samples; sample++) {
      const copy = await provisionStackCopy({
        assemblyDir: options.assemblyDir,
        endpoint: options.endpoint,
        name: unique('memory'),
      });
      const ingest = functionOf(copy, 'IngestFunctionName');
      const aggregate = functionOf(copy, 'AggregateFunctionName');
      configured = { IngestOrders: ingest.memoryMb, AggregateHours: aggregate.memoryMb };
      const maxBytes = Number(copy.ingestEnvironment.MAX_BODY_BYTES ?? 1024 * 1024);
      const ingestEvent = largestDeliverable(copy, maxBytes);
      const runs = [
        {
          name: 'IngestOrders' as const,
          fn: ingest,
          environment: copy.ingestEnvironment,
          event: ingestEvent,
        },
        {
          name: 'AggregateHours' as const,
          fn: aggregate,
          environment: copy.aggregateEnvironment,
          event: sqsEvent(
            copy,
            'aggregate',
            Array.from({ length: MESSAGES_PER_INVOCATION }, (_, h) =>
              JSON.stringify({
                hour: new Date(START + h * HOUR).toISOString().replace('.000Z', 'Z'),
              }),
            ),
          ),
        },
      ];
      for (const run of runs) {
        const dir = join(work, `${run.name}-${sample}`);
        mkdirSync(dir);
        const result = await runFresh({
          fn: run.fn,
          environment: run.environment,
          event: run.event,
          dir,
          // A figure of memory, not of time: the largest batch runs to its end however slow the
          // machine is that day (it once met ingest's 30 s on a 2-core machine at half speed).
          timeoutMs: LAMBDA_MAX_TIMEOUT_MS,
        });
        peaks[run.name] = Math.max(peaks[run.name], result.maxRssBytes);
      }
    }
    return Object.fromEntries(
      (Object.keys(peaks) as (keyof typeof peaks)[]).map((name) => {
        const peakRssMb = Number((peaks[name] / 2 ** 20).toFixed(1));
        return [
          name,
          {
            configuredMb: configured[name],
            peakRssMb,
            headroom: Number((configured[name] / peakRssMb).toFixed(2)),
          },
        ];
      }),
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
};
