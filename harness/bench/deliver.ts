/**
 * How every approach receives its messages: from a copy of the synthesized stack's orders queue,
 * through the local runtime's event source mapping, wave by wave, metered per wave.
 */
import { randomUUID } from 'node:crypto';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { sendBodies } from '../../adapters/sqs.ts';
import { adminClients } from '../../local/clients.ts';
import { drainQueue } from '../../local/drain.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/emulators.ts';
import { provisionStackCopy, type StackCopy } from '../../local/stack-copy.ts';
import type { Message } from './approaches.ts';
import type { CapacityMeter, RequestMeter } from './meter.ts';

export const clientConfig = (endpoint: string) => ({
  endpoint,
  region: LOCAL_REGION,
  credentials: LOCAL_CREDENTIALS,
});
export const unique = (prefix: string) =>
  `${prefix}-${Date.now().toString(36)}-${randomUUID().slice(0, 8)}`;

/**
 * Sends each wave to the stack copy's orders queue and runs the event source mapping (the local
 * runtime's poller) over it until it is drained: a failed message comes back with its message id,
 * as a redelivery does, and a later wave is sent once every earlier one was processed.
 */
export const deliver = async (
  copy: StackCopy,
  messages: readonly Message[],
  handler: (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>,
  contextFor: () => Context,
  meter: CapacityMeter,
  requests: RequestMeter,
  beforeRetry?: () => Promise<void>,
) => {
  // The producer's sends and the event source mapping's receives and deletes, as billed.
  const sqs = requests.attach(
    adminClients(copy.ingestEnvironment.AWS_ENDPOINT_URL ?? '', LOCAL_REGION).sqs,
    'sqs',
  );
  // Every approach runs as the stack's ingest function would: at its configured memory.
  const invoke = requests.timed(handler, memoryOf(copy, 'IngestFunctionName'));
  const queue = copy.queues.orders;
  let invocations = 0;
  const waveWriteUnits: number[] = [];
  const waves = [...new Set(messages.map((m) => m.wave ?? 0))].sort((a, b) => a - b);
  for (const wave of waves) {
    const unitsBefore = meter.writeUnits;
    const bodies = messages.filter((m) => (m.wave ?? 0) === wave).map((m) => m.body);
    await sendBodies(sqs, queue.url, bodies);
    const drained = await drainQueue({
      sqs,
      queueUrl: queue.url,
      queueArn: queue.arn,
      region: LOCAL_REGION,
      invoke: (_, event) => invoke(event, contextFor()),
      timeoutMs: 900_000,
      ...(beforeRetry
        ? {
            onBatch: async (report) => {
              if (report.failedIds.length > 0) await beforeRetry();
            },
          }
        : {}),
    });
    invocations += drained.invocations;
    waveWriteUnits.push(meter.writeUnits - unitsBefore);
  }
  return { invocations, waveWriteUnits };
};

/** A copy of the synthesized stack for one pass: its orders queue feeds every approach. */
export const stackCopy = (endpoint: string, assemblyDir: string) =>
  provisionStackCopy({ assemblyDir, endpoint, name: unique('bench') });

/** The configured memory of one of the stack's functions, by its output. */
export const memoryOf = (copy: StackCopy, output: string): number => {
  const fn = copy.stack.functions.find((f) => f.name === copy.outputs[output]);
  if (!fn) throw new Error(`the stack has no function for its output ${output}`);
  return fn.memoryMb;
};
