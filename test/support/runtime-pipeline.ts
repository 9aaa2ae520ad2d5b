/**
 * The same pipeline interface as createPipeline, but through the local runtime: the bundled code
 * from a cloud assembly, in Lambda-like environments, configured from the template, with the
 * aggregate function fed by its event source mapping. Each pipeline is a fresh copy of the stack
 * on emulators shared by the test file.
 */
import type { SQSBatchResponse } from 'aws-lambda';
import { inject, onTestFinished } from 'vitest';
import { startLocalRuntime } from '../../local/runtime.ts';
import { failedIdsOf, toSqsEvent } from '../../local/sqs-event.ts';
import { DEADLINE_MS } from './deadlines.ts';
import { useEmulators } from './emulators.ts';
import {
  aggregateQueueSender,
  type Delivery,
  recordsOf,
  redeliverUntilDone,
  stateViews,
  uniqueName,
} from './pipeline.ts';

export const useRuntimePipelines = () => {
  const emulators = useEmulators();
  const assembly = inject('assembly');

  return async () => {
    const runtime = await startLocalRuntime({
      assemblyDir: assembly.assemblyDir,
      stackName: assembly.stackName,
      localStackName: uniqueName('rt'),
      emulators: emulators(),
      retryDelaySeconds: 1,
    });
    onTestFinished(() => runtime.stop());
    const { outputs } = runtime.stack;
    const ingestFunction = runtime.stack.functions.find(
      (f) => f.environment.AGGREGATE_QUEUE_URL !== undefined,
    );
    const ordersQueue = runtime.stack.queues.find((q) => q.url === outputs.OrdersQueueUrl);
    if (
      !ingestFunction ||
      !ordersQueue ||
      !outputs.TableName ||
      !outputs.BucketName ||
      !outputs.AggregateQueueUrl
    ) {
      throw new Error('the stack lacks the ingest function or its outputs');
    }

    /** One invocation of the deployed ingest code, answered as the event source mapping reads it. */
    const ingest = async (deliveries: readonly Delivery[]): Promise<SQSBatchResponse> => {
      const records = recordsOf(deliveries, ordersQueue.arn);
      const ids = records.map((r) => r.messageId);
      try {
        const response = await runtime.invoke(ingestFunction.logicalId, toSqsEvent(records));
        return {
          batchItemFailures: failedIdsOf(response, ids).ids.map((itemIdentifier) => ({
            itemIdentifier,
          })),
        };
      } catch {
        return { batchItemFailures: ids.map((itemIdentifier) => ({ itemIdentifier })) };
      }
    };

    return {
      ...stateViews(runtime.clients, outputs.TableName, outputs.BucketName),
      admin: runtime.clients,
      aggregateQueueUrl: outputs.AggregateQueueUrl,
      ingest,
      deliverUntilDone: redeliverUntilDone(ingest),
      drainAggregates: () => runtime.drain({ timeoutMs: DEADLINE_MS }),
      sendToAggregateQueue: aggregateQueueSender(runtime.clients.sqs, outputs.AggregateQueueUrl),
    };
  };
};
