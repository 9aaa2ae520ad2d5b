/**
 * The deployed bundles as Lambda runs them: each loads in a fresh Node 24 process with nothing
 * beside it (no node_modules: the AWS SDK is bundled) and runs its first invocation against the
 * local edge, within the size budget the README states.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, inject, it } from 'vitest';
import { firstEvent, functionOf, runFresh } from '../../harness/bench/cold-start.ts';
import { type ModelBatch, referenceModel } from '../../harness/model.ts';
import { adminClients } from '../../local/clients.ts';
import { LOCAL_REGION } from '../../local/emulators.ts';
import { toSqsEvent } from '../../local/sqs-event.ts';
import { provisionStackCopy } from '../../local/stack-copy.ts';
import { hourObjectKey } from '../../shared/keys.ts';
import { uniqueName } from '../support/pipeline.ts';

/** Per bundle, minified with the SDK inside (the README's performance section gives today's). */
const BUNDLE_BUDGET_BYTES = 640 * 1024;

describe('the deployed bundles', () => {
  it('load and run their first invocation in a fresh process with no node_modules, each under the size budget', async () => {
    const { assemblyDir, stackName } = inject('assembly');
    const copy = await provisionStackCopy({
      assemblyDir,
      stackName,
      endpoint: inject('endpoint'),
      name: uniqueName('bundles'),
    });
    const work = mkdtempSync(join(tmpdir(), 'onceflow-bundles-'));
    const [ingestRecord] = firstEvent('IngestOrders', copy, 0).Records;
    const batch = JSON.parse(ingestRecord?.body ?? '') as ModelBatch;
    // Ingest first: the aggregate invocation recomputes the hour that batch wrote.
    for (const [name, output, environment] of [
      ['IngestOrders', 'IngestFunctionName', copy.ingestEnvironment],
      ['AggregateHours', 'AggregateFunctionName', copy.aggregateEnvironment],
    ] as const) {
      const dir = join(work, name);
      mkdirSync(dir);
      const fn = functionOf(copy, output);
      // node:http comes through require(): an ES module import of it would load undici too.
      expect(readFileSync(fn.handlerFile, 'utf8'), name).not.toMatch(
        /from\s*"node:http"|import\("node:http"\)/,
      );
      const run = await runFresh({
        fn,
        environment,
        event:
          name === 'IngestOrders'
            ? toSqsEvent(ingestRecord ? [ingestRecord] : [])
            : firstEvent(name, copy, 0),
        dir,
      });
      expect(run.bundleBytes, name).toBeLessThan(BUNDLE_BUDGET_BYTES);
    }
    // What the two invocations did: the batch applied, its hour published.
    const hour = await adminClients(inject('endpoint'), LOCAL_REGION).s3.send(
      new GetObjectCommand({
        Bucket: copy.outputs.BucketName,
        Key: hourObjectKey('2026-10-01T00:00:00Z'),
      }),
    );
    const [expected] = referenceModel([batch]).hourly;
    expect(JSON.parse(await (hour.Body?.transformToString() ?? ''))).toMatchObject({
      hour: expected?.hour,
      events: expected?.events,
    });
  });
});
