/**
 * Where a schedule runs: a copy of the synthesized stack, clients that carry its faults, and
 * fresh function environments built from the template's configuration on demand.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { AwsClients } from '../../adapters/clients.ts';
import { S3Store } from '../../adapters/s3.ts';
import {
  aggregateDependencies,
  aggregatorPorts,
  finalizerPorts,
  finalizerSettings,
  ingestPorts,
  ingestSettings,
} from '../../adapters/wiring.ts';
import { createAggregateHandler } from '../../functions/aggregate-hours.ts';
import { createFinalizeHandler } from '../../functions/finalize-hours.ts';
import { createIngestHandler } from '../../functions/ingest-orders.ts';
import { adminClients } from '../../local/clients.ts';
import { deprovisionStack } from '../../local/deprovision.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/emulators.ts';
import { lambdaContext } from '../../local/lambda-context.ts';
import { provisionStackCopy, type StackCopy } from '../../local/stack-copy.ts';
import type { AggregatorPorts } from '../../shared/aggregator.ts';
import { loadAggregateConfig, loadFinalizeConfig, loadIngestConfig } from '../../shared/config.ts';
import { type FinalizerRun, QUARANTINE_CLOSE_GRACE_MS } from '../../shared/finalizer.ts';
import type { LatePolicy } from '../../shared/late-policy.ts';
import { FaultInjector } from '../faults.ts';
import type { Dice } from './dice.ts';
import { VersionLog } from './versions.ts';

export type Handler = (
  event: SQSEvent,
  context: ReturnType<typeof lambdaContext>,
) => Promise<SQSBatchResponse>;

export interface World {
  readonly copy: StackCopy;
  readonly table: string;
  readonly bucket: string;
  /** Clients without faults: for sending, redriving and judging. */
  readonly admin: AwsClients;
  readonly faults: FaultInjector;
  /** The aggregator's ports on the faulty clients (a reconcile mid-run uses them). */
  readonly aggregatorPorts: AggregatorPorts;
  /** The aggregator's ports on clean clients, for judging. */
  readonly judgePorts: AggregatorPorts;
  readonly store: S3Store;
  /** What happens to events of closed hours in this schedule. */
  readonly latePolicy: LatePolicy;
  /** Every version of the hour objects the harness read. */
  readonly versions: VersionLog;
  newIngest(): Handler;
  newAggregator(): Handler;
  /**
   * One run of the finalizer function, on a clock a close grace ahead of its previous run (so
   * an hour one run closes is final on the next, under either policy).
   */
  finalize(): Promise<FinalizerRun>;
  /**
   * Deletes the stack copy and closes the schedule's clients, whose connections the edge would
   * otherwise keep open to the end of the run, as AWS's endpoints keep idle ones for minutes.
   */
  dispose(): Promise<void>;
}

/** The function clients, each carrying the fault injector; aggregator writes finish out of order. */
const faultyClients = (endpoint: string, faults: FaultInjector, dice: Dice): AwsClients => {
  const config = { endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const clients = {
    dynamo: faults.attach(new DynamoDBClient(config)),
    s3: faults.attach(new S3Client({ ...config, forcePathStyle: true })),
    sqs: faults.attach(new SQSClient(config)),
  };
  clients.s3.middlewareStack.add(
    (next, context) => async (args) => {
      const key = String((args.input as { Key?: string }).Key);
      if (context.commandName === 'PutObjectCommand' && key.startsWith('aggregates/')) {
        if (dice.chance(0.3)) await new Promise((r) => setTimeout(r, dice.int(1, 15)));
      }
      return next(args);
    },
    { step: 'initialize', name: 'chaosStall' },
  );
  return clients;
};

export const buildWorld = async (
  o: {
    endpoint: string;
    assemblyDir: string;
    seed: number;
    /** Default drawn from the seed. */
    latePolicy?: LatePolicy;
    onProvisioned?: (c: StackCopy) => void | Promise<void>;
  },
  dice: Dice,
): Promise<World> => {
  const latePolicy = o.latePolicy ?? (dice.chance(0.5) ? 'quarantine' : 'amend');
  // A copy of the synthesized stack, exactly as the template defines it.
  const copy = await provisionStackCopy({
    assemblyDir: o.assemblyDir,
    endpoint: o.endpoint,
    name: `chaos-${o.seed}-${randomUUID().slice(0, 8)}`,
  });
  await o.onProvisioned?.(copy);
  const bucket = copy.outputs.BucketName ?? '';
  const admin = adminClients(o.endpoint, LOCAL_REGION);
  const faults = new FaultInjector();
  const clients = faultyClients(o.endpoint, faults, dice);
  // The policy as `-c latePolicy=…` sets it: the same variable on the ingest function and the
  // finalizer (the stack tests pin it).
  const policy = { LATE_POLICY: latePolicy };
  const ingestConfig = loadIngestConfig({ ...copy.ingestEnvironment, ...policy });
  const aggregateConfig = loadAggregateConfig(copy.aggregateEnvironment);
  const finalizeConfig = loadFinalizeConfig({ ...copy.finalizeEnvironment, ...policy });
  const store = new S3Store(admin.s3, bucket);
  let clockAhead = 0;
  const finalizeHandler = createFinalizeHandler({
    ports: { ...finalizerPorts(finalizeConfig, clients), now: () => Date.now() + clockAhead },
    settings: finalizerSettings(finalizeConfig),
  });
  return {
    copy,
    table: copy.outputs.TableName ?? '',
    bucket,
    admin,
    faults,
    aggregatorPorts: aggregatorPorts(aggregateConfig, clients),
    judgePorts: aggregatorPorts(aggregateConfig, admin),
    store,
    latePolicy,
    versions: new VersionLog(store),
    finalize: () => {
      clockAhead += QUARANTINE_CLOSE_GRACE_MS + 1_000;
      return finalizeHandler({}, lambdaContext('chaos-finalize', 120_000));
    },
    newIngest: () =>
      createIngestHandler({
        ports: ingestPorts(ingestConfig, clients),
        settings: ingestSettings(ingestConfig),
      }),
    newAggregator: () => createAggregateHandler(aggregateDependencies(aggregateConfig, clients)),
    dispose: async () => {
      try {
        await deprovisionStack(copy.stack, admin);
      } finally {
        for (const client of [...Object.values(admin), ...Object.values(clients)]) client.destroy();
      }
    },
  };
};
