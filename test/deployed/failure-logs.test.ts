/**
 * A record that fails leaves a trace the runbook can follow: one structured ERROR line naming
 * the error, its cause and the message, and a FailedRecords metric, in the function's own log,
 * as the local runtime runs the bundled code.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, DeleteBucketCommand } from '@aws-sdk/client-s3';
import * as v from 'valibot';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { DynamoOrderReader } from '../../adapters/dynamo-order-reader.ts';
import { queueDepth, sendBodies } from '../../adapters/sqs.ts';
import { verify } from '../../cli/commands/reconcile.ts';
import { replayDlq } from '../../cli/commands/replay-dlq.ts';
import { status } from '../../cli/commands/status.ts';
import type { Target } from '../../cli/target.ts';
import { referenceModel } from '../../harness/model.ts';
import { waitFor } from '../../local/net.ts';
import { startLocalRuntime } from '../../local/runtime.ts';
import { validateBatch } from '../../shared/schema.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { sharedDynamoLocal } from '../support/emulators.ts';
import { seedBatches } from '../support/fixtures.ts';
import { parseBatch } from '../support/json.ts';
import { uniqueName } from '../support/pipeline.ts';

const JsonLineSchema = v.record(v.string(), v.unknown());

/**
 * The JSON lines of every log file. The runtime writes the workers' output chunk by chunk, so
 * the text after the last newline may be a line still being written: it is left for later.
 */
const logLines = (dir: string) =>
  readdirSync(dir).flatMap((file) =>
    readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .slice(0, -1)
      .filter((line) => line.startsWith('{'))
      .map((line) => v.parse(JsonLineSchema, JSON.parse(line))),
  );

/** The stack on the local runtime, its function logs in a directory of the test's own. */
const runtimeWithLogs = async () => {
  const { assemblyDir, stackName } = inject('assembly');
  const logDir = mkdtempSync(join(tmpdir(), 'onceflow-logs-'));
  const runtime = await startLocalRuntime({
    assemblyDir,
    stackName,
    localStackName: uniqueName('failures'),
    dynamoLocal: sharedDynamoLocal(),
    logDir,
    retryDelaySeconds: 1,
  });
  onTestFinished(() => runtime.stop());
  return { runtime, logDir };
};

describe('a failing record', () => {
  it('logs one ERROR line with the error, its cause and the message, and counts FailedRecords', async () => {
    const { runtime, logDir } = await runtimeWithLogs();
    // A failing dependency: the table is gone, as after a mistaken delete or a wrong TABLE_NAME.
    await runtime.clients.dynamo.send(
      new DeleteTableCommand({ TableName: runtime.stack.outputs.TableName }),
    );
    const [body = ''] = seedBatches();
    await sendBodies(runtime.clients.sqs, runtime.stack.outputs.OrdersQueueUrl ?? '', [body]);

    const failed = () => logLines(logDir).filter((l) => l.message === 'record failed');
    await waitFor(() => failed().length > 0, { timeoutMs: DEADLINE_MS, what: 'the ERROR line' });
    expect(failed()[0]).toMatchObject({
      level: 'ERROR',
      batchId: 'make-orders-1',
      attempt: 1,
      messageId: expect.any(String),
      error: { name: 'ResourceNotFoundException', message: expect.any(String) },
    });
    // The metrics are flushed when the invocation ends, after the ERROR line was written.
    const metrics = () => logLines(logDir).filter((l) => '_aws' in l && 'FailedRecords' in l);
    await waitFor(() => metrics().length > 0, { timeoutMs: DEADLINE_MS, what: 'the metrics line' });
    expect(metrics()[0]?.FailedRecords).toBe(1);
  });
});

describe('the runbook for messages in a DLQ', () => {
  it('is followed end to end: a failing dependency, the alarm condition, the log line, the fix, the redrive', async () => {
    const { runtime, logDir } = await runtimeWithLogs();
    const outputs = runtime.stack.outputs;
    const target: Target = {
      kind: 'local',
      endpoint: runtime.endpoint,
      region: runtime.region,
      stackName: runtime.stack.stackName,
      clients: runtime.clients,
      outputs,
      output: (name) => outputs[name] ?? '',
    };
    // A failing dependency: the bucket is gone, so the archive write fails on every attempt.
    const bucket = outputs.BucketName ?? '';
    await runtime.clients.s3.send(new DeleteBucketCommand({ Bucket: bucket }));
    const [body = ''] = seedBatches();
    await sendBodies(runtime.clients.sqs, outputs.OrdersQueueUrl ?? '', [body]);

    // The alarm's condition: a message in the orders DLQ (`…DlqMessages`, threshold 1).
    await waitFor(
      async () => (await queueDepth(runtime.clients.sqs, outputs.OrdersDlqUrl ?? '')).visible >= 1,
      { timeoutMs: DEADLINE_MS, what: 'the message in the DLQ' },
    );
    // "Look at the function's logs": the ERROR line names the cause, the batch and the attempt.
    // The log file is written by the runtime as the worker prints, so it may trail the DLQ.
    const failedLines = () => logLines(logDir).filter((l) => l.message === 'record failed');
    await waitFor(() => failedLines().length >= 5, {
      timeoutMs: DEADLINE_MS,
      what: 'five ERROR lines',
    });
    const failed = failedLines();
    expect(failed).toHaveLength(5);
    expect(failed.map((l) => l.attempt)).toEqual([1, 2, 3, 4, 5]);
    expect(failed[4]).toMatchObject({
      batchId: 'make-orders-1',
      error: { name: 'NoSuchBucket' },
    });

    // Fix the cause, then `onceflow replay dlq --queue orders` and `onceflow drain`.
    await runtime.clients.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const moved = await replayDlq(target, 'orders');
    expect(moved.moved).toBe(1);
    await runtime.drain({ timeoutMs: DEADLINE_MS });

    const parsed = validateBatch(JSON.parse(body));
    if (!parsed.ok) throw new Error(parsed.detail);
    const model = referenceModel([parseBatch(body)]);
    const orders = await new DynamoOrderReader(
      runtime.clients.dynamo,
      outputs.TableName ?? '',
    ).listOrders();
    expect(orders).toEqual(model.orders);
    expect((await verify(target)).differences).toEqual([]);
    expect((await status(target)).ledger).toMatchObject({ applied: 1, pending: 0 });
    expect((await queueDepth(runtime.clients.sqs, outputs.OrdersDlqUrl ?? '')).visible).toBe(0);
  });
});
