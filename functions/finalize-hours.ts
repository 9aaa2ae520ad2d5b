/**
 * Scheduled (every 5 minutes by default): finalizes the hours the watermark has passed and no
 * batch in progress can touch, in order, and lists them in their day's index (shared/finalizer.ts).
 * Runs that overlap or crash are harmless: the next one redoes what is left.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { createDynamoClient, createS3Client } from '../adapters/clients.ts';
import { loadTracing, NO_TRACING, type Tracing } from '../adapters/tracing.ts';
import { finalizerPorts, finalizerSettings } from '../adapters/wiring.ts';
import { loadFinalizeConfig, loadTracingConfig } from '../shared/config.ts';
import {
  type FinalizerPorts,
  type FinalizerRun,
  type FinalizerSettings,
  finalizeHours,
} from '../shared/finalizer.ts';
import { instrumented, observability, once } from './sqs-record.ts';

export interface FinalizeDependencies {
  readonly ports: FinalizerPorts;
  readonly settings: FinalizerSettings;
}

/** Builds the handler; dependencies may be given lazily (created at the first invocation). */
export const createFinalizeHandler = (
  dependencies: FinalizeDependencies | (() => FinalizeDependencies),
  tracing: Tracing = NO_TRACING,
) => {
  const resolve = once(dependencies);
  const { logger, metrics } = observability();
  return instrumented<unknown, FinalizerRun>(tracing, logger, metrics).handler(async () => {
    const { ports, settings } = resolve();
    const run = await finalizeHours(ports, settings);
    metrics.addMetric('HoursFinalized', MetricUnit.Count, run.finalized.length);
    if (run.finalized.length > 0 || run.heldBy)
      logger.info('hours finalized', {
        watermark: run.watermark,
        finalized: run.finalized.map((f) => f.hour),
        nextHour: run.nextHour,
        ...(run.heldBy ? { heldBy: run.heldBy } : {}),
      });
    return run;
  });
};

// Before anything else: whether the tracer loads at all.
const tracing = await loadTracing(loadTracingConfig(process.env).enabled);

export const handler = createFinalizeHandler(() => {
  const config = loadFinalizeConfig(process.env);
  const clients = tracing.capture({
    dynamo: createDynamoClient(config.aws),
    s3: createS3Client(config.aws),
  });
  return { ports: finalizerPorts(config, clients), settings: finalizerSettings(config) };
}, tracing);
