/** Sending, delivering and redriving within a schedule, all through the product's own paths. */
import {
  ListMessageMoveTasksCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { queueDepth, sendBodies } from '../../adapters/sqs.ts';
import { drainQueue } from '../../local/drain.ts';
import { LOCAL_REGION } from '../../local/emulators.ts';
import { lambdaContext } from '../../local/lambda-context.ts';
import { waitFor } from '../../local/net.ts';
import type { LocalQueue } from '../../local/provision.ts';
import type { Dice } from './dice.ts';
import type { Handler, World } from './world.ts';

export interface Delivery {
  /** Sends bodies to the orders queue (new message ids, as a producer's sends). */
  send(bodies: readonly string[]): Promise<void>;
  /** Runs both functions' event source mappings until their queues are drained. */
  runAll(): Promise<void>;
  /** Moves a DLQ's messages back to its source with a message move task. */
  redrive(dlq: LocalQueue, source: LocalQueue): Promise<void>;
  /** Redrives both DLQs and runs again, until nothing is left in them (at most `rounds`). */
  settle(rounds: number): Promise<void>;
}

/**
 * The event source mapping (the local runtime's poller), with two concurrent slots, each
 * invoking its own environment; receives of 1–10 messages; and sometimes a batch running twice
 * at once in a twin environment, as a handler outliving the visibility timeout causes.
 */
const drive = async (
  sqs: SQSClient,
  dice: Dice,
  queue: LocalQueue,
  newEnvironment: () => Handler,
  /** Run after each invocation (reading what it published). */
  after?: () => Promise<void>,
) => {
  const slots = [0, 1].map(() => ({ handler: newEnvironment(), twin: newEnvironment() }));
  await drainQueue({
    sqs,
    queueUrl: queue.url,
    queueArn: queue.arn,
    region: LOCAL_REGION,
    maxConcurrency: slots.length,
    receiveSize: () => dice.int(1, 10),
    invoke: async (slot, event) => {
      const env = slots[slot];
      if (!env) throw new Error(`no environment for slot ${slot}`);
      const run = (h: Handler) => h(event, lambdaContext('chaos', 30_000));
      const [first] = await Promise.allSettled(
        dice.chance(0.1) ? [run(env.handler), run(env.twin)] : [run(env.handler)],
      );
      await after?.();
      if (first?.status === 'rejected') throw first.reason;
      return first?.value;
    },
  });
};

export const deliveryFor = (world: World, dice: Dice): Delivery => {
  const { admin } = world;
  const { orders, ordersDlq, aggregate, aggregateDlq } = world.copy.queues;

  const redrive = async (dlq: LocalQueue, source: LocalQueue) => {
    if ((await queueDepth(admin.sqs, dlq.url)).visible === 0) return;
    await admin.sqs.send(
      new StartMessageMoveTaskCommand({ SourceArn: dlq.arn, DestinationArn: source.arn }),
    );
    const status = async () =>
      (await admin.sqs.send(new ListMessageMoveTasksCommand({ SourceArn: dlq.arn }))).Results?.[0]
        ?.Status;
    await waitFor(async () => (await status()) === 'COMPLETED', {
      timeoutMs: 120_000,
      what: 'the DLQ redrive',
    });
  };

  const runAll = async () => {
    await drive(admin.sqs, dice, orders, world.newIngest);
    // A consumer polling the bucket: every version the aggregator leaves is read.
    await drive(admin.sqs, dice, aggregate, world.newAggregator, () => world.versions.observe());
  };

  return {
    send: async (bodies) => {
      const { refused } = await sendBodies(admin.sqs, orders.url, bodies);
      if (refused.length > 0) throw new Error(`chaos bodies refused: ${JSON.stringify(refused)}`);
    },
    runAll,
    redrive,
    settle: async (rounds) => {
      for (let round = 0; round < rounds; round++) {
        const o = await queueDepth(admin.sqs, ordersDlq.url);
        const a = await queueDepth(admin.sqs, aggregateDlq.url);
        if (o.visible + a.visible === 0) return;
        await redrive(ordersDlq, orders);
        await redrive(aggregateDlq, aggregate);
        await runAll();
      }
    },
  };
};
