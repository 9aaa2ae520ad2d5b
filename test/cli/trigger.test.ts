/**
 * `onceflow pause`, `onceflow resume` and `onceflow scale` against the local stack, through the
 * Lambda API the edge serves as AWS does: a paused trigger leaves a batch waiting in its queue,
 * unapplied and no receive spent, `status` says which trigger is paused, and `resume` applies
 * what waited; a trigger is paused only once the batch it runs has finished; `scale` changes
 * how many invocations run at once and how many messages each gets.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { queueDepth } from '../../adapters/sqs.ts';
import { type Emulators, startEmulators } from '../../local/emulators.ts';
import { waitFor } from '../../local/net.ts';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { onceflow, recordState, spawnOnceflow } from '../support/cli.ts';
import { DEADLINE_MS, DEADLINE_S } from '../support/deadlines.ts';
import { sharedDynamoLocal } from '../support/emulators.ts';
import { seedBatches } from '../support/fixtures.ts';
import { holdFirstCall } from '../support/hold.ts';
import { uniqueName } from '../support/pipeline.ts';

let emulators: Emulators;
let runtime: LocalRuntime;
const dir = mkdtempSync(join(tmpdir(), 'onceflow-trigger-'));

beforeAll(async () => {
  emulators = await startEmulators({ dynamoLocal: sharedDynamoLocal() });
  const { assemblyDir, stackName } = inject('assembly');
  runtime = await startLocalRuntime({
    assemblyDir,
    stackName,
    localStackName: uniqueName('trigger'),
    emulators,
    retryDelaySeconds: 1,
  });
});
afterAll(async () => {
  await runtime?.stop();
  await emulators?.stop();
});

const TriggersSchema = v.object({
  triggers: v.strictObject({
    ingest: v.string(),
    aggregate: v.string(),
    finalize: v.string(),
    watch: v.string(),
  }),
});

describe('onceflow pause and resume', () => {
  it('holds a batch in its queue while ingest’s trigger is paused, says so in status, and applies it on resume', async () => {
    const state = recordState(runtime, dir);
    const cli = (...args: string[]) => onceflow(['--local-state', state, ...args]);
    const triggers = async () =>
      v.parse(TriggersSchema, JSON.parse((await cli('status', '--json')).stdout)).triggers;
    expect(await triggers()).toEqual({
      ingest: 'Enabled',
      aggregate: 'Enabled',
      finalize: 'Enabled',
      watch: 'Enabled',
    });

    // Seconds: status prints the time of the change to the second.
    const pausing = Math.floor(Date.now() / 1000) * 1000;
    const paused = await cli('pause', 'ingest');
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toMatch(/^ingest's trigger is paused \(\S+\): its messages wait/);
    expect(await triggers()).toEqual({
      ingest: 'Disabled',
      aggregate: 'Enabled',
      finalize: 'Enabled',
      watch: 'Enabled',
    });
    // Since when: the pause's time, from the mapping's LastModified.
    const printed = await cli('status');
    const since =
      /triggers: ingest PAUSED since (\S+Z), aggregate enabled, finalize enabled, watch enabled \(resume with `onceflow resume ingest`\)/.exec(
        printed.stdout,
      )?.[1];
    expect(since, printed.stdout).toBeDefined();
    expect(Date.parse(since ?? '')).toBeGreaterThanOrEqual(pausing);
    expect(Date.parse(since ?? '')).toBeLessThanOrEqual(Date.now());
    const changed = v.parse(
      v.object({ triggersChangedAt: v.record(v.string(), v.string()) }),
      JSON.parse((await cli('status', '--json')).stdout),
    ).triggersChangedAt;
    expect(Object.keys(changed).sort()).toEqual(['aggregate', 'ingest']);
    expect(Date.parse(changed.ingest ?? '')).toBeGreaterThanOrEqual(pausing);

    const [batch] = seedBatches();
    const QueueUrl = runtime.stack.outputs.OrdersQueueUrl;
    await runtime.clients.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: batch }));
    // Nothing drains while paused: the batch waits (a broken pause would apply it well within).
    const waited = await cli('drain', '--timeout', '3');
    expect(waited.code).toBe(1);
    expect(waited.stderr).toContain('did not drain within 3 s');
    const batchId = v.parse(v.object({ batchId: v.string() }), JSON.parse(batch ?? '{}')).batchId;
    expect((await cli('batch', batchId, '--json')).stdout).not.toContain('"applied"');

    const resumed = await cli('resume', 'ingest');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^ingest's trigger is enabled again/);
    expect((await cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);
    expect((await cli('batch', batchId, '--json')).stdout).toContain('"applied"');
    const depth = await queueDepth(runtime.clients.sqs, runtime.stack.outputs.OrdersDlqUrl ?? '');
    expect(depth.visible + depth.inFlight).toBe(0);
  });

  it('does not report ingest paused while a batch it runs is unfinished, and resume waits while the trigger is Disabling', async () => {
    const state = recordState(runtime, dir);
    const cli = (...args: string[]) => onceflow(['--local-state', state, ...args]);
    const hold = holdFirstCall(runtime, 'IngestOrders', (call) => call.service === 'dynamodb');
    onTestFinished(hold.release);
    const [, batch = ''] = seedBatches();
    const QueueUrl = runtime.stack.outputs.OrdersQueueUrl;
    await runtime.clients.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: batch }));
    await hold.reached();

    // The batch is held running: the trigger cannot be disabled yet, and the command says why.
    const early = await cli('pause', 'ingest', '--timeout', '2');
    expect(early.code).toBe(1);
    expect(early.stderr).toContain(
      "ingest's trigger is Disabling: batches it is running finish first",
    );
    expect(early.stderr).toContain(
      "ingest's trigger was not disabled within 2 s (it is Disabling): AWS applies a change in the background",
    );
    expect((await cli('status')).stdout).toMatch(/triggers: ingest Disabling since \S+Z,/);

    // Resume is refused while Disabling; it waits, and takes once the batch has finished.
    const resume = spawnOnceflow(['--local-state', state, 'resume', 'ingest']);
    let stdout = '';
    let stderr = '';
    resume.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    resume.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    let code: number | null | undefined;
    const exited = new Promise<number | null>((resolve) =>
      resume.on('close', (c) => {
        code = c;
        resolve(c);
      }),
    );
    const busy = "ingest's trigger is busy, waiting:";
    await waitFor(() => stderr.includes(busy) || code !== undefined, {
      timeoutMs: DEADLINE_MS,
      what: 'resume to be refused while the trigger is Disabling',
    });
    expect(stderr).toContain(busy);
    hold.release();
    expect(await exited, stderr).toBe(0);
    expect(stdout).toMatch(/^ingest's trigger is enabled again/);
    expect((await cli('drain', '--timeout', DEADLINE_S)).code).toBe(0);
    const batchId = v.parse(v.object({ batchId: v.string() }), JSON.parse(batch)).batchId;
    expect((await cli('batch', batchId, '--json')).stdout).toContain('"applied"');
  });

  it('holds the finalizer’s and the pending watcher’s schedules with pause, as DisableRule does, and resumes them', async () => {
    const state = recordState(runtime, dir);
    const cli = (...args: string[]) => onceflow(['--local-state', state, ...args]);
    const rule = runtime.stack.schedules.find((s) =>
      s.functionLogicalId.startsWith('FinalizeHours'),
    );
    if (!rule) throw new Error('no finalizer schedule in the stack');
    const paused = await cli('pause', 'finalize');
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toBe(
      `finalize's schedule is paused (${rule.ruleName}): no hour is finalized until \`onceflow resume finalize\`\n`,
    );
    expect((await cli('status')).stdout).toContain('finalize PAUSED');
    const resumed = await cli('resume', 'finalize');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((await cli('status')).stdout).toContain('finalize enabled');

    // The pending watcher's schedule alike, and `check` warns of it meanwhile.
    const watcher = runtime.stack.schedules.find((s) =>
      s.functionLogicalId.startsWith('WatchPending'),
    );
    expect((await cli('pause', 'watch')).stdout).toBe(
      `watch's schedule is paused (${watcher?.ruleName}): no stuck batch is noticed (the OldestPendingBatchAge alarm reads no data as fine) until \`onceflow resume watch\`\n`,
    );
    expect((await cli('check')).stdout).toContain(
      '! watch, schedule: Disabled: no stuck batch is noticed (the OldestPendingBatchAge alarm reads no data as fine) until `onceflow resume watch`',
    );
    expect((await cli('resume', 'watch')).code).toBe(0);
    expect((await cli('status')).stdout).toContain('watch enabled');
  });

  it('shows and changes a trigger’s concurrency and batch size with scale, and prints Lambda’s refusals', async () => {
    const state = recordState(runtime, dir);
    const cli = (...args: string[]) => onceflow(['--local-state', state, ...args]);
    const { logicalId = '' } =
      runtime.stack.mappings.find((m) => m.functionLogicalId.startsWith('IngestOrders')) ?? {};
    const shown = await cli('scale', 'ingest');
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(
      /^ingest's trigger [\w-]+: batch size 10, batching window 0 s, concurrency 10 \(Enabled\)\n$/,
    );

    const slowed = await cli('scale', 'ingest', '--max-concurrency', '2', '--batch-size', '4');
    expect(slowed.code, slowed.stderr).toBe(0);
    expect(slowed.stdout).toContain(
      ': batch size 10 → 4, batching window 0 s, concurrency 10 → 2 (Enabled)',
    );
    expect(runtime.pollers.get(logicalId)?.settings).toEqual({
      batchSize: 4,
      batchingWindowSeconds: 0,
      maxConcurrency: 2,
      reportBatchItemFailures: true,
      filters: [],
    });

    const refused = await cli('scale', 'ingest', '--batch-size', '20');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10',
    );
    // The aggregate queue is FIFO (hour notifications coalesce per window): no batching window.
    const fifo = await cli('scale', 'aggregate', '--batching-window', '5');
    expect(fifo.code).toBe(1);
    expect(fifo.stderr).toContain('Batching window is not supported for FIFO queues');

    const restored = await cli('scale', 'ingest', '--max-concurrency', '10', '--batch-size', '10');
    expect(restored.stdout).toContain('batch size 4 → 10, batching window 0 s, concurrency 2 → 10');
  });

  it('names the functions it can pause when given another', async () => {
    const state = recordState(runtime, dir);
    const refused = await onceflow(['--local-state', state, 'pause', 'watcher']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "'watcher' is invalid for argument 'function'. Allowed choices are ingest, aggregate, finalize, watch.",
    );
  });
});
