/**
 * A record that fails leaves a trace the runbook can follow: one structured ERROR line naming
 * the error, its cause and the message, and a FailedRecords metric, in the function's own log,
 * as the local runtime runs the bundled code.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { sendBodies } from '../../adapters/sqs.ts';
import { waitFor } from '../../local/net.ts';
import { startLocalRuntime } from '../../local/runtime.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { seedBatches } from '../support/fixtures.ts';

const logLines = (dir: string) =>
  readdirSync(dir).flatMap((file) =>
    readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>),
  );

describe('a failing record', () => {
  it('logs one ERROR line with the error, its cause and the message, and counts FailedRecords', async () => {
    const { assemblyDir, stackName } = inject('assembly');
    const logDir = mkdtempSync(join(tmpdir(), 'onceflow-logs-'));
    const runtime = await startLocalRuntime({
      assemblyDir,
      stackName,
      logDir,
      retryDelaySeconds: 1,
    });
    onTestFinished(() => runtime.stop());
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
    const metrics = logLines(logDir).filter((l) => '_aws' in l && 'FailedRecords' in l);
    expect(metrics.length).toBeGreaterThan(0);
    expect(metrics[0]?.FailedRecords).toBe(1);
  });
});
