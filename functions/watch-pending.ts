/**
 * Scheduled (every 5 minutes): how many batches are in progress and how old the oldest is, from
 * the sparse pending index, as metrics. A batch pending long is one whose message is stuck
 * (retrying, or in a DLQ): the `OldestPendingBatchAge` alarm wakes someone before its hours
 * stay wrong for long.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { createDynamoClient } from '../adapters/clients.ts';
import { DynamoLedger, type PendingBatch } from '../adapters/dynamo.ts';
import { loadTracing, NO_TRACING, type Tracing } from '../adapters/tracing.ts';
import { loadTracingConfig, loadWatchConfig } from '../shared/config.ts';
import { type PendingReport, pendingReport } from '../shared/pending.ts';
import { instrumented, observability, once } from './sqs-record.ts';

export interface WatchDependencies {
  readonly pendingBatches: () => Promise<readonly PendingBatch[]>;
  readonly now: () => number;
}

/** Builds the handler; dependencies may be given lazily (created at the first invocation). */
export const createWatchHandler = (
  dependencies: WatchDependencies | (() => WatchDependencies),
  tracing: Tracing = NO_TRACING,
) => {
  const resolve = once(dependencies);
  const { logger, metrics } = observability();
  return instrumented<unknown, PendingReport>(tracing, logger, metrics).handler(async () => {
    const { pendingBatches, now } = resolve();
    const report = pendingReport(await pendingBatches(), now());
    metrics.addMetric('PendingBatches', MetricUnit.Count, report.pending);
    metrics.addMetric('OldestPendingBatchAge', MetricUnit.Seconds, report.oldestAgeSeconds);
    if (report.pending > 0)
      logger.info('batches in progress', {
        pending: report.pending,
        oldestAgeSeconds: report.oldestAgeSeconds,
        oldest: report.oldest.map((b) => b.batchId),
      });
    return report;
  });
};

// Before anything else: whether the tracer loads at all.
const tracing = await loadTracing(loadTracingConfig(process.env).enabled);

export const handler = createWatchHandler(() => {
  const config = loadWatchConfig(process.env);
  const { dynamo } = tracing.capture({ dynamo: createDynamoClient(config.aws) });
  const ledger = new DynamoLedger(dynamo, config.tableName);
  return { pendingBatches: () => ledger.pendingBatches(), now: Date.now };
}, tracing);
