/**
 * SQS → S3: recomputes each notified hour from the counters and publishes it if it changed.
 * Hours repeated within one invocation are recomputed once: every message of the batch was sent
 * before the batch was received, so one recompute started after covers them all.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import * as v from 'valibot';
import { createDynamoClient, createS3Client } from '../adapters/clients.ts';
import { loadTracing, NO_TRACING, type Tracing } from '../adapters/tracing.ts';
import { aggregateDependencies } from '../adapters/wiring.ts';
import { type AggregatorPorts, type PublishOutcome, publishHour } from '../shared/aggregator.ts';
import { loadAggregateConfig, loadTracingConfig } from '../shared/config.ts';
import { type DayIndexPorts, ensureListed, publishDayIndex } from '../shared/day-index.ts';
import { boundDetail } from '../shared/errors.ts';
import type { Quarantine } from '../shared/ingest.ts';
import { describeValidationIssues, HourMessageSchema } from '../shared/schema.ts';
import {
  instrumented,
  loggingFailures,
  observability,
  once,
  processFifoGroups,
  toIncomingMessage,
} from './sqs-record.ts';

export interface AggregateDependencies {
  readonly ports: AggregatorPorts;
  readonly quarantine: Quarantine;
  /** The day indexes of final hours, republished when a final hour is (amended or finalized). */
  readonly index: DayIndexPorts;
}

const parseHourMessage = (body: string) => {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    return {
      ok: false as const,
      reason: 'invalid-json' as const,
      detail: (error as Error).message,
    };
  }
  const result = v.safeParse(HourMessageSchema, json);
  return result.success
    ? { ok: true as const, hour: result.output.hour }
    : {
        ok: false as const,
        reason: 'schema-violation' as const,
        detail: describeValidationIssues(result.issues),
      };
};

/** Builds the handler; dependencies may be given lazily, as for the ingest function. */
export const createAggregateHandler = (
  dependencies: AggregateDependencies | (() => AggregateDependencies),
  tracing: Tracing = NO_TRACING,
) => {
  const resolve = once(dependencies);
  const { logger, metrics } = observability();
  return instrumented<SQSEvent, SQSBatchResponse>(tracing, logger, metrics).handler(
    (event, context) => {
      const { ports, quarantine, index } = resolve();
      metrics.addMetric('RecordsReceived', MetricUnit.Count, event.Records.length);
      const inFlight = new Map<string, Promise<PublishOutcome>>();
      const recordHandler = async (record: SQSRecord): Promise<void> => {
        const parsed = parseHourMessage(record.body);
        if (!parsed.ok) {
          const { messageId, sentAtMs, body } = toIncomingMessage(record);
          await quarantine.put({
            source: 'aggregate',
            messageId,
            sentAtMs,
            body,
            reason: parsed.reason,
            detail: boundDetail(parsed.detail),
          });
          metrics.addMetric('RejectedMessages', MetricUnit.Count, 1);
          logger.warn('message quarantined', {
            messageId,
            reason: parsed.reason,
            detail: boundDetail(parsed.detail),
          });
          return;
        }
        const shared = inFlight.get(parsed.hour);
        const publishing = shared ?? publishHour(parsed.hour, ports);
        inFlight.set(parsed.hour, publishing);
        const outcome = await publishing;
        // The hour's other messages in this batch share the one publication: counted once.
        if (shared) return;
        if (outcome.kind === 'written') {
          metrics.addMetric('HoursWritten', MetricUnit.Count, 1);
          if (outcome.amended) {
            metrics.addMetric('LateAfterFinal', MetricUnit.Count, 1);
            logger.warn('final hour amended', {
              hour: parsed.hour,
              amendments: outcome.lifecycle.amendments,
            });
          }
          // After the hour object: its day's index never lists what the object does not say.
          if (outcome.lifecycle.final)
            await publishDayIndex(parsed.hour.slice(0, 10), index, [parsed.hour]);
        }
        if (outcome.kind === 'unchanged') {
          metrics.addMetric('HoursUnchanged', MetricUnit.Count, 1);
          // A redelivery after a crash between the object and its index completes the index.
          if (outcome.lifecycle.final)
            await ensureListed(
              {
                hour: parsed.hour,
                revision: outcome.aggregate.revision,
                events: outcome.aggregate.events,
                amendments: outcome.lifecycle.amendments ?? 0,
              },
              index,
            );
        }
        logger.info('hour published', { hour: parsed.hour, outcome: outcome.kind });
      };
      const handle = loggingFailures(logger, metrics, recordHandler);
      // A coalescing (FIFO) queue delivers each hour's messages in order, one group per hour:
      // the hours are published concurrently, each hour's messages in turn, and a failure fails
      // the rest of its hour's messages in the batch, and only those (SQS keeps the group's order).
      const fifo = event.Records[0]?.eventSourceARN.endsWith('.fifo') ?? false;
      return fifo
        ? processFifoGroups(event, handle, context)
        : processPartialResponse(event, handle, new BatchProcessor(EventType.SQS), { context });
    },
  );
};

// Before anything else: whether the tracer loads at all.
const tracing = await loadTracing(loadTracingConfig(process.env).enabled);

export const handler = createAggregateHandler(() => {
  const config = loadAggregateConfig(process.env);
  // No SQS client: the aggregator sends nothing (and so does not bundle or load one).
  const clients = tracing.capture({
    dynamo: createDynamoClient(config.aws),
    s3: createS3Client(config.aws),
  });
  return aggregateDependencies(config, clients);
}, tracing);
