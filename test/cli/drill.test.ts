/**
 * `onceflow drill restore` when the runbook cannot put everything right: the drill is a check,
 * and a check that passes whatever it finds proves nothing. The passing drill is in
 * `recovery.test.ts`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { S3Store } from '../../adapters/s3.ts';
import { ingestSettings } from '../../adapters/wiring.ts';
import { type Emulators, startEmulators } from '../../local/emulators.ts';
import { waitFor } from '../../local/net.ts';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { loadIngestConfig } from '../../shared/config.ts';
import { planBatch } from '../../shared/ingest.ts';
import { hourObjectKey } from '../../shared/keys.ts';
import { validateBatch } from '../../shared/schema.ts';
import { onceflow, ROOT, recordState } from '../support/cli.ts';
import { DEADLINE_MS, DEADLINE_S } from '../support/deadlines.ts';
import { sharedDynamoLocal } from '../support/emulators.ts';
import { placedEvent } from '../support/hours.ts';
import { stateViews, uniqueName } from '../support/pipeline.ts';

const SEED = join(ROOT, 'test', 'fixtures', 'seed-orders', 'batches.ndjson');
const dir = mkdtempSync(join(tmpdir(), 'onceflow-drill-'));

let emulators: Emulators;
beforeAll(async () => {
  emulators = await startEmulators({ dynamoLocal: sharedDynamoLocal() });
});
afterAll(async () => {
  await emulators?.stop();
});

/** A copy of the stack in a local runtime on `on`, and the CLI bound to it as `--target local`. */
const drillStack = async (on: Emulators, name: string) => {
  const { assemblyDir, stackName } = inject('assembly');
  const runtime = await startLocalRuntime({
    assemblyDir,
    stackName,
    localStackName: uniqueName(name),
    emulators: on,
    retryDelaySeconds: 1,
  });
  onTestFinished(() => runtime.stop());
  const state = recordState(runtime, dir);
  const cli = (...args: string[]) => onceflow(['--local-state', state, ...args]);
  const ledger = new DynamoLedger(runtime.clients.dynamo, runtime.stack.outputs.TableName ?? '');
  return { runtime, cli, outputs: runtime.stack.outputs, ledger };
};

/** The ingest function's plan for a batch body, with the stack's own settings. */
const planOf = (runtime: LocalRuntime, body: string) => {
  const parsed = validateBatch(JSON.parse(body));
  if (!parsed.ok) throw new Error(parsed.detail);
  const ingest = runtime.stack.functions.find((f) => f.logicalId.startsWith('IngestOrders'));
  if (!ingest) throw new Error('the stack has no ingest function');
  return planBatch(parsed.batch, ingestSettings(loadIngestConfig(ingest.environment)));
};

describe('onceflow drill restore', () => {
  it('marks each check the runbook leaves failing and exits 1: a batch never archived, a DLQ not empty, an hour object without events', async () => {
    const { runtime, cli, outputs, ledger } = await drillStack(emulators, 'drill');
    expect((await cli('send', SEED)).code).toBe(0);
    expect((await cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);

    // A batch claimed and never archived: its message failed before the archive write and went
    // to the DLQ, where it still is.
    const body = JSON.stringify({
      batchId: uniqueName('unarchived'),
      events: [placedEvent(uniqueName('o-unarchived'))],
    });
    const plan = planOf(runtime, body);
    await ledger.claim(plan, undefined, Date.now());
    await runtime.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: outputs.OrdersDlqUrl, MessageBody: body }),
    );
    const snapshot = await cli('drill', 'snapshot');
    expect(snapshot.code, snapshot.stderr).toBe(0);
    const at = /--at (\S+)/.exec(snapshot.stdout)?.[1] ?? '';
    // An hour object for an hour the table has no events of (copied by hand, or left from a
    // table newer than the copy): nothing re-sent touches it, so the runbook leaves it.
    const store = new S3Store(runtime.clients.s3, outputs.BucketName ?? '');
    const text = (await store.getText(hourObjectKey('2026-10-01T09:00:00Z'))) ?? '';
    const stray = '2026-10-02T09:00:00Z';
    await runtime.clients.s3.send(
      new PutObjectCommand({
        Bucket: outputs.BucketName,
        Key: hourObjectKey(stray),
        Body: text.replace('2026-10-01T09:00:00Z', stray),
      }),
    );

    const drill = await cli('drill', 'restore', '--at', at, '--timeout', DEADLINE_S);
    expect(drill.stderr).toBe('');
    expect(drill.code).toBe(1);
    const marked = drill.stdout.split('\n').filter((line) => line.trimStart().startsWith('✗'));
    expect(marked).toEqual([
      `   ✗ 1 archive the ledger names is missing (${plan.archiveKey}): only their messages can apply them; look in the DLQs`,
      expect.stringMatching(/^ {3}✗ \d+ hours checked, 1 difference$/),
      '   ✗ 1 batch pending in the ledger',
      '   ✗ both DLQs empty',
    ]);
    expect(drill.stdout).toContain('the drill found problems (see ✗ above)');
  });

  it('re-sends a batch the copy shows pending when the index answered just before the restore that none was', async () => {
    // A lag long enough for the whole restore to fall within it, as `npm start -- --read-lag`.
    const lagging = await startEmulators({ dynamoLocal: sharedDynamoLocal(), readLagMs: 5_000 });
    onTestFinished(() => lagging.stop());
    const { runtime, cli, outputs, ledger } = await drillStack(lagging, 'drill-lag');
    const orderId = uniqueName('o-pending');
    const body = JSON.stringify({ batchId: uniqueName('pending'), events: [placedEvent(orderId)] });
    // Claimed two hours ago, so the arrival index files it before the copy: only the pending
    // index names it to the runbook.
    await ledger.claim(planOf(runtime, body), undefined, Date.now() - 2 * 3_600_000);
    const snapshot = await cli('drill', 'snapshot');
    expect(snapshot.code, snapshot.stderr).toBe(0);
    const at = /--at (\S+)/.exec(snapshot.stdout)?.[1] ?? '';
    // Its message arrives after the copy and completes it; then the pending index answers that
    // nothing is pending, an answer the replica keeps for the lag.
    await runtime.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: outputs.OrdersQueueUrl, MessageBody: body }),
    );
    expect((await cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);
    await waitFor(async () => (await ledger.pendingBatches()).length === 0, {
      timeoutMs: DEADLINE_MS,
      what: 'the pending index to answer that nothing is pending',
    });

    const drill = await cli('drill', 'restore', '--at', at, '--timeout', DEADLINE_S);
    expect(drill.stderr).toBe('');
    expect(drill.stdout).toContain(
      '✓ re-sent 1 archived batch received since the copy or pending in it',
    );
    expect(drill.stdout).toContain('✓ 0 batches pending in the ledger');
    expect(drill.code).toBe(0);
    const views = stateViews(runtime.clients, outputs.TableName ?? '', outputs.BucketName ?? '');
    expect((await views.orders()).map((o) => o.orderId)).toContain(orderId);
  });
});
