/**
 * The integration suite for a deployed stack: the same tests run against the local runtime
 * (in `npm test`) and against LocalStack or AWS (`npm run test:localstack`). Only the endpoint and
 * the stack outputs differ.
 */
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import type { AwsClients } from '../../adapters/clients.ts';
import { DynamoOrderReader } from '../../adapters/dynamo-order-reader.ts';
import { S3Store } from '../../adapters/s3.ts';
import { readRejects } from '../../adapters/s3-quarantine.ts';
import { inspectBatch } from '../../cli/commands/batch.ts';
import type { Target } from '../../cli/target.ts';
import { parseBatch } from '../support/json.ts';
import { type Scenario, scenario } from './scenario.ts';

export interface DeployedTarget {
  readonly clients: AwsClients;
  readonly outputs: Readonly<Record<string, string>>;
  /** Waits until both queues are empty with nothing in flight. */
  drain(): Promise<void>;
}

export const deployedPipelineSuite = (name: string, target: () => DeployedTarget) => {
  const output = (key: string) => {
    const value = target().outputs[key];
    if (!value) throw new Error(`the stack has no output ${key}`);
    return value;
  };
  const send = async (bodies: readonly string[]) => {
    for (let i = 0; i < bodies.length; i += 10) {
      await target().clients.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: output('OrdersQueueUrl'),
          Entries: bodies
            .slice(i, i + 10)
            .map((MessageBody, j) => ({ Id: String(j), MessageBody })),
        }),
      );
    }
  };
  const s3 = () => new S3Store(target().clients.s3, output('BucketName'));
  const state = async (s: Scenario) => ({
    orders: s.own.orders(
      await new DynamoOrderReader(target().clients.dynamo, output('TableName')).listOrders(),
    ),
    hours: s.own.hours(await s3().listAggregates()),
  });
  /** The operator CLI's view of the same stack (`onceflow batch`). */
  const cliView = (): Target => ({
    kind: 'aws',
    endpoint: undefined,
    region: 'us-east-1',
    stackName: name,
    clients: target().clients,
    outputs: target().outputs,
    output,
  });
  const rejectsOf = async (s: Scenario) => {
    const rejects = await readRejects(s3());
    return rejects.filter((r) => r.body.includes(s.prefix));
  };

  describe(`the deployed pipeline (${name})`, () => {
    it('ends with the expected orders and hourly aggregates for the reference stream', async () => {
      const s = scenario();
      await send(s.batches);
      await target().drain();
      expect(await state(s)).toEqual({ orders: s.expectedOrders, hours: s.expectedHourly });
    });

    it('ends in the same state when every batch is sent twice, in reverse order', async () => {
      const s = scenario();
      await send([...s.batches].reverse());
      await send([...s.batches].reverse());
      await target().drain();
      expect(await state(s)).toEqual({ orders: s.expectedOrders, hours: s.expectedHourly });
      // Each batch applied once, every event counted by it and no other.
      for (const body of s.batches) {
        const { batchId, events } = parseBatch(body);
        const report = await inspectBatch(cliView(), batchId);
        expect(report).toMatchObject({ state: 'applied', archived: true });
        expect(report?.fates).toMatchObject({ counted: events.length, duplicate: 0 });
      }
    });

    it('quarantines invalid bodies and a reused batch id, and applies the valid batches beside them', async () => {
      const s = scenario();
      const reused = parseBatch(s.batches[0] ?? '');
      for (const e of reused.events) e.amount = '999.00';
      await send([
        ...s.batches,
        `{"batchId":"${s.prefix}-broken"`,
        JSON.stringify({ batchId: `${s.prefix}-empty`, events: [] }),
      ]);
      await target().drain();
      await send([JSON.stringify(reused)]);
      await target().drain();
      expect(await state(s)).toEqual({ orders: s.expectedOrders, hours: s.expectedHourly });
      expect((await rejectsOf(s)).map((r) => r.reason).sort()).toEqual([
        'batch-conflict',
        'invalid-json',
        'schema-violation',
      ]);
      // Found by the batch id they name: the reused one, and the body refused whole.
      const named = await readRejects(s3(), { batchId: `${s.prefix}-empty` });
      expect(named.map((r) => r.reason)).toEqual(['schema-violation']);
      expect((await readRejects(s3(), { batchId: reused.batchId })).map((r) => r.reason)).toEqual([
        'batch-conflict',
      ]);
    });
  });
};
