/**
 * SQS → DynamoDB: applies each order batch exactly once. Each message succeeds or fails on its
 * own (partial batch response); invalid ones are quarantined and acknowledged.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createAwsClients } from '../adapters/clients.ts';
import { loadTracing, NO_TRACING, type Tracing } from '../adapters/tracing.ts';
import { ingestPorts, ingestSettings } from '../adapters/wiring.ts';
import { loadIngestConfig, loadTracingConfig } from '../shared/config.ts';
import { type IngestPorts, type IngestSettings, ingestMessage } from '../shared/ingest.ts';
import {
  instrumented,
  loggingFailures,
  observability,
  once,
  toIncomingMessage,
} from './sqs-record.ts';

export interface IngestDependencies {
  readonly ports: IngestPorts;
  readonly settings: IngestSettings;
}

/**
 * Builds the handler. Dependencies may be given lazily: the deployed handler resolves them from
 * the environment on its first invocation (once per container), so importing this module never
 * needs configuration.
 */
export const createIngestHandler = (
  dependencies: IngestDependencies | (() => IngestDependencies),
  tracing: Tracing = NO_TRACING,
) => {
  const resolve = once(dependencies);
  const { logger, metrics } = observability();
  const recordHandler = async (record: SQSRecord): Promise<void> => {
    const { ports, settings } = resolve();
    const outcome = await ingestMessage(toIncomingMessage(record), ports, settings);
    // Commits cancelled by other transactions on the same items and tried again: contention on
    // an hour's counters or a shard's totals (README, "Guarantees and their limits", item 5).
    if (outcome.kind !== 'rejected')
      metrics.addMetric('CommitConflictRetries', MetricUnit.Count, outcome.commitConflictRetries);
    switch (outcome.kind) {
      case 'applied':
        metrics.addMetric('BatchesApplied', MetricUnit.Count, 1);
        metrics.addMetric('EventsApplied', MetricUnit.Count, outcome.counted);
        metrics.addMetric('StaleEvents', MetricUnit.Count, outcome.staleEvents);
        // Events another batch had already applied: a producer re-sending under new batch ids.
        metrics.addMetric('EventsAlreadyApplied', MetricUnit.Count, outcome.reclaimed);
        metrics.addMetric('EventConflicts', MetricUnit.Count, outcome.conflicts);
        // Refused by latePolicy quarantine: each hour's part is in rejects/ (reason too-late).
        metrics.addMetric('TooLateEvents', MetricUnit.Count, outcome.tooLate);
        logger.info('batch applied', {
          batchId: outcome.plan.batch.batchId,
          hours: outcome.plan.hours,
          events: outcome.plan.batch.events.length,
          counted: outcome.counted,
          ...(outcome.reclaimed ? { alreadyApplied: outcome.reclaimed } : {}),
          ...(outcome.conflicts ? { eventConflicts: outcome.conflicts } : {}),
          ...(outcome.tooLate ? { tooLate: outcome.tooLate } : {}),
        });
        if (outcome.tooLate > 0) {
          logger.warn('events of closed hours quarantined', {
            batchId: outcome.plan.batch.batchId,
            tooLate: outcome.tooLate,
          });
        }
        if (outcome.conflicts > 0) {
          logger.warn('event conflicts quarantined', {
            batchId: outcome.plan.batch.batchId,
            eventConflicts: outcome.conflicts,
          });
        }
        break;
      case 'duplicate':
        metrics.addMetric('DuplicateBatches', MetricUnit.Count, 1);
        logger.info('duplicate batch ignored', { batchId: outcome.plan.batch.batchId });
        break;
      case 'rejected':
        metrics.addMetric(
          outcome.reason === 'batch-conflict' ? 'BatchConflicts' : 'RejectedMessages',
          MetricUnit.Count,
          1,
        );
        logger.warn('message quarantined', {
          messageId: record.messageId,
          reason: outcome.reason,
          detail: outcome.detail,
        });
        break;
    }
  };

  return instrumented<SQSEvent, SQSBatchResponse>(tracing, logger, metrics).handler(
    (event, context) => {
      resolve(); // a configuration error fails the invocation itself, naming the variable
      metrics.addMetric('RecordsReceived', MetricUnit.Count, event.Records.length);
      // A processor per invocation: it holds per-batch state.
      const handle = loggingFailures(logger, metrics, recordHandler);
      return processPartialResponse(event, handle, new BatchProcessor(EventType.SQS), {
        context,
      });
    },
  );
};

// Before anything else: whether the tracer loads at all.
const tracing = await loadTracing(loadTracingConfig(process.env).enabled);

export const handler = createIngestHandler(() => {
  const config = loadIngestConfig(process.env);
  return {
    ports: ingestPorts(config, tracing.capture(createAwsClients(config.aws))),
    settings: ingestSettings(config),
  };
}, tracing);
