import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { describe, expect, inject, it } from 'vitest';
import { DynamoEventClock } from '../../adapters/dynamo-hours.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/emulators.ts';
import { watermarkStepOf } from '../../shared/watermark.ts';
import { seedBatches } from '../support/fixtures.ts';
import { parseBatch } from '../support/json.ts';
import { createPipeline } from '../support/pipeline.ts';

const RECEIVED = Date.parse('2026-12-01T00:00:00Z');
const HOUR = 3_600_000;
let runs = 0;

/** A DynamoDB client of one environment, counting the writes it sends. */
const countingClient = () => {
  const client = new DynamoDBClient({
    endpoint: inject('endpoint'),
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
  const counter = { writes: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'UpdateItemCommand') counter.writes++;
      return next(args);
    },
    { step: 'initialize', name: 'countWrites' },
  );
  return { client, counter };
};

describe('the watermark item', () => {
  it('holds the latest step whatever the order and the environments that advance it, each writing once per later step it sees', async () => {
    const p = await createPipeline();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(3), fc.integer({ min: 0, max: 48 * HOUR })), {
          minLength: 1,
          maxLength: 30,
        }),
        async (advances) => {
          // Each run starts from a later base so the item's earlier runs never mask this one.
          const base = Date.parse('2026-10-01T00:00:00Z') + runs++ * 100 * HOUR;
          const environments = [0, 1, 2, 3].map(() => {
            const { client, counter } = countingClient();
            return { clock: new DynamoEventClock(client, p.tableName), counter, seen: new Set() };
          });
          await Promise.all(
            advances.map(async ([env, offset]) => {
              const e = environments[env];
              if (!e) throw new Error('no environment');
              e.seen.add(watermarkStepOf(base + offset, RECEIVED));
              await e.clock.advance(base + offset, RECEIVED);
            }),
          );
          const latest = Math.max(...advances.map(([, o]) => watermarkStepOf(base + o, RECEIVED)));
          expect(await environments[0]?.clock.latest()).toBe(latest);
          for (const e of environments) expect(e.counter.writes).toBeLessThanOrEqual(e.seen.size);
        },
      ),
      { numRuns: 15 },
    );
  });

  it('moves to the step of the latest event the pipeline applied', async () => {
    const p = await createPipeline();
    const batches = seedBatches();
    await p.deliverUntilDone(batches);
    const latestEvent = Math.max(
      ...batches.flatMap((b) => parseBatch(b).events.map((e) => Date.parse(e.eventTime))),
    );
    const clock = new DynamoEventClock(p.admin.dynamo, p.tableName);
    expect(await clock.latest()).toBe(watermarkStepOf(latestEvent, Date.now()));
  });
});
