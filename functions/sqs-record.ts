import {
  FullBatchFailureError,
  processPartialResponse,
  SqsFifoPartialProcessorAsync,
} from '@aws-lambda-powertools/batch';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Tracing } from '../adapters/tracing.ts';
import type { IncomingMessage } from '../shared/ingest.ts';

/** The parts of an SQS record the functions use. SentTimestamp dates a reject deterministically. */
export const toIncomingMessage = (record: SQSRecord): IncomingMessage => ({
  messageId: record.messageId,
  body: record.body,
  sentAtMs: Number(record.attributes.SentTimestamp) || 0,
});

/**
 * A function's logger, and its metrics warning through that logger: the warning that an
 * invocation recorded no metric (one that failed before counting anything) is then a structured
 * line with the invocation's context, at the log level configured, not a bare console line.
 */
export const observability = () => {
  const logger = new Logger();
  return { logger, metrics: new Metrics({ logger }) };
};

/**
 * The middleware every function runs: the trace outermost (its subsegment spans the rest), then
 * the logger's Lambda context, then the metrics flush.
 */
export const instrumented = <Event, Result>(tracing: Tracing, logger: Logger, metrics: Metrics) =>
  middy<Event, Result, Error, Context>()
    .use(tracing.middlewares)
    .use(injectLambdaContext(logger))
    .use(logMetrics(metrics));

/** Resolves a value or a factory once and keeps it (per container, like module scope). */
export const once = <T>(valueOrFactory: T | (() => T)): (() => T) => {
  let resolved: { value: T } | undefined;
  return () => {
    resolved ??= {
      value: typeof valueOrFactory === 'function' ? (valueOrFactory as () => T)() : valueOrFactory,
    };
    return resolved.value;
  };
};

/** The batch id a body names, when it is a JSON object with a string `batchId` (for logs only). */
const batchIdOf = (body: string): string | undefined => {
  try {
    const value: unknown = JSON.parse(body);
    if (typeof value !== 'object' || value === null || !('batchId' in value)) return undefined;
    return typeof value.batchId === 'string' ? value.batchId.slice(0, 128) : undefined;
  } catch {
    return undefined; // not JSON: nothing to name
  }
};

/**
 * A record handler that, when a record fails, logs one structured ERROR line with the error and
 * its cause chain (Powertools formats both), the message id, the batch id when the body names
 * one, and the attempt (ApproximateReceiveCount), and counts `FailedRecords`; then rethrows, so
 * the record goes back to the queue. Powertools' batch processor keeps a failed record's error
 * without logging it: without this, a message can reach the DLQ leaving no trace of why.
 */
export const loggingFailures =
  (logger: Logger, metrics: Metrics, handle: (record: SQSRecord) => Promise<void>) =>
  async (record: SQSRecord): Promise<void> => {
    try {
      await handle(record);
    } catch (error) {
      const batchId = batchIdOf(record.body);
      logger.error('record failed', {
        messageId: record.messageId,
        ...(batchId === undefined ? {} : { batchId }),
        attempt: Number(record.attributes.ApproximateReceiveCount) || 1,
        error: error instanceof Error ? error : new Error(String(error)),
      });
      metrics.addMetric('FailedRecords', MetricUnit.Count, 1);
      throw error;
    }
  };

/**
 * A FIFO batch with its message groups processed concurrently, each group's records in order:
 * Powertools' FIFO processor, one per group, skips the rest of a group after a failure and
 * leaves the other groups alone. Run over the whole batch, that processor handles one record
 * at a time, so the ten hours of a batch (independent of one another) took ten round trips of
 * publishing in a row. As with one processor, a batch whose every record failed throws
 * `FullBatchFailureError`, so the invocation counts as failed.
 */
export const processFifoGroups = async (
  event: SQSEvent,
  handle: (record: SQSRecord) => Promise<void>,
  context: Context,
): Promise<SQSBatchResponse> => {
  const groups = Map.groupBy(event.Records, (r) => r.attributes.MessageGroupId ?? '');
  const runs = [...groups.values()].map(async (records) => {
    const processor = new SqsFifoPartialProcessorAsync();
    const response = await processPartialResponse({ Records: records }, handle, processor, {
      context,
      skipGroupOnError: true,
      throwOnFullBatchFailure: false,
    });
    return { failures: response.batchItemFailures, errors: processor.errors };
  });
  const settled = await Promise.all(runs);
  const batchItemFailures = settled.flatMap((s) => s.failures);
  if (event.Records.length > 0 && batchItemFailures.length === event.Records.length)
    throw new FullBatchFailureError(settled.flatMap((s) => s.errors));
  return { batchItemFailures };
};
