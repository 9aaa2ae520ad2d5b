/**
 * A copy of the synthesized stack on the emulators, for code that runs the functions in-process
 * (tests, chaos, the bench): the queues, table and bucket come from `provisionStack`, exactly as
 * the template defines them, and each function's environment is the one the template gives it,
 * pointed at the local edge. The only way, besides the local runtime, that resources are made.
 */

import * as v from 'valibot';
import { adminClients } from './clients.ts';
import { LOCAL_REGION } from './emulators.ts';
import {
  type LocalFunction,
  type LocalQueue,
  type ProvisionedStack,
  provisionStack,
} from './provision.ts';
import { loadStack } from './template.ts';

/** The queues the pipeline needs, found through the stack's outputs. */
export interface PipelineQueues {
  readonly orders: LocalQueue;
  readonly ordersDlq: LocalQueue;
  readonly aggregate: LocalQueue;
  readonly aggregateDlq: LocalQueue;
}

export interface StackCopy {
  readonly stack: ProvisionedStack;
  readonly outputs: Readonly<Record<string, string>>;
  readonly queues: PipelineQueues;
  /** The ingest function's environment as deployed, plus the local endpoint. */
  readonly ingestEnvironment: Readonly<Record<string, string>>;
  /** The aggregate function's environment as deployed, plus the local endpoint. */
  readonly aggregateEnvironment: Readonly<Record<string, string>>;
  /** The finalizer's environment as deployed, plus the local endpoint. */
  readonly finalizeEnvironment: Readonly<Record<string, string>>;
}

const RedrivePolicySchema = v.object({ maxReceiveCount: v.union([v.number(), v.string()]) });

/** The receives after which a queue sends a message to its DLQ (its redrive policy). */
export const maxReceiveCount = (queue: LocalQueue): number => {
  const policy = queue.attributes.RedrivePolicy;
  const parsed = policy ? v.safeParse(RedrivePolicySchema, JSON.parse(policy)) : undefined;
  const count = parsed?.success ? Number(parsed.output.maxReceiveCount) : NaN;
  if (!Number.isInteger(count)) throw new Error(`${queue.name} has no redrive policy`);
  return count;
};

const localEnvironment = (endpoint: string, fn: LocalFunction) => ({
  AWS_REGION: LOCAL_REGION,
  AWS_ENDPOINT_URL: endpoint,
  S3_FORCE_PATH_STYLE: 'true',
  ...fn.environment,
});

export interface StackCopyOptions {
  /** A synthesized cloud assembly (cdk.out, or one made by a test's global setup). */
  readonly assemblyDir: string;
  /** The local edge. */
  readonly endpoint: string;
  /** A name unique on these emulators: resource names derive from it. */
  readonly name: string;
  /** The stack in the assembly; default its only one. */
  readonly stackName?: string;
}

export const provisionStackCopy = async (o: StackCopyOptions): Promise<StackCopy> => {
  const template = loadStack(o.assemblyDir, o.stackName);
  const clients = adminClients(o.endpoint, LOCAL_REGION);
  // Closed once done with: the edge keeps a client's idle connections open until it stops.
  const stack = await provisionStack(
    { ...template, stackName: o.name },
    clients,
    LOCAL_REGION,
  ).finally(() => {
    for (const client of Object.values(clients)) client.destroy();
  });
  const { outputs } = stack;
  const queue = (output: string): LocalQueue => {
    const found = stack.queues.find((q) => q.url === outputs[output]);
    if (!found) throw new Error(`the stack has no queue for its output ${output}`);
    return found;
  };
  const fn = (output: string): LocalFunction => {
    const found = stack.functions.find((f) => f.name === outputs[output]);
    if (!found) throw new Error(`the stack has no function for its output ${output}`);
    return found;
  };
  return {
    stack,
    outputs,
    queues: {
      orders: queue('OrdersQueueUrl'),
      ordersDlq: queue('OrdersDlqUrl'),
      aggregate: queue('AggregateQueueUrl'),
      aggregateDlq: queue('AggregateDlqUrl'),
    },
    ingestEnvironment: localEnvironment(o.endpoint, fn('IngestFunctionName')),
    aggregateEnvironment: localEnvironment(o.endpoint, fn('AggregateFunctionName')),
    finalizeEnvironment: localEnvironment(o.endpoint, fn('FinalizeFunctionName')),
  };
};
