/**
 * `npm start -- --watch` end to end, on a copy of the project (its sources are edited here): a
 * change to the ingest function's source is synthesized again and runs from the next message,
 * while the stack keeps what it held.
 */
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { adminClients } from '../../local/clients.ts';
import { waitFor } from '../../local/net.ts';
import { LocalStateSchema } from '../../local/state.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { seedBatches } from '../support/fixtures.ts';
import { parseBatch, parseJson } from '../support/json.ts';
import { launchStart } from '../support/start.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/** What `npm start` needs of the project: its code, the CDK app and the dependencies. */
const copyProject = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'onceflow-project-'));
  for (const entry of ['infra', 'functions', 'shared', 'adapters', 'local'])
    cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
  for (const file of ['cdk.json', 'package.json', 'package-lock.json', 'tsconfig.json'])
    cpSync(join(ROOT, file), join(dir, file));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
};

describe('npm start -- --watch', () => {
  it('runs an edited function from the next message, keeping the stack’s data', async () => {
    const project = copyProject();
    const stateDir = join(project, '.onceflow');
    const run = launchStart(['--watch', '--no-demo', '--port', '0'], { project });
    try {
      await run.until('Watching infra, functions, shared, adapters, cdk.json, package-lock.json');
      const state = parseJson(LocalStateSchema, readFileSync(join(stateDir, 'local.json'), 'utf8'));
      const clients = adminClients(state.endpoint, state.region);
      const ledger = new DynamoLedger(clients.dynamo, state.outputs.TableName ?? '');
      const applied = async (batchId: string) => {
        const entry = await ledger.entry(batchId);
        return entry !== undefined && entry.doneParts.size === entry.parts;
      };
      const sendAndApply = async (body: string) => {
        await clients.sqs.send(
          new SendMessageCommand({ QueueUrl: state.outputs.OrdersQueueUrl, MessageBody: body }),
        );
        const { batchId } = parseBatch(body);
        await waitFor(() => applied(batchId), {
          timeoutMs: DEADLINE_MS,
          what: `batch ${batchId} to be applied`,
        });
        return batchId;
      };
      const [first, second] = seedBatches();
      if (!first || !second) throw new Error('the seed stream has fewer than two batches');
      const firstId = await sendAndApply(first);
      const log = join(stateDir, 'logs', `${state.outputs.IngestFunctionName}.log`);
      const edited = () =>
        existsSync(log) && readFileSync(log, 'utf8').includes('ingest edited while running');
      expect(edited()).toBe(false);

      // The edit: the ingest module says so when an environment loads it.
      appendFileSync(
        join(project, 'functions', 'ingest-orders.ts'),
        "\nconsole.log('ingest edited while running');\n",
      );
      await run.until('updated in');
      expect(run.output()).toContain('functions/ingest-orders.ts changed: synthesizing…');
      // Only the function whose code changed is updated.
      expect(run.output()).toMatch(/\n {2}IngestOrders\w* updated in \d+ ms/);

      await sendAndApply(second);
      expect(edited()).toBe(true);
      // The stack kept what it held: the first batch is still applied.
      expect(await applied(firstId)).toBe(true);
    } finally {
      run.child.kill('SIGINT');
    }
    expect(await run.exited).toBe(0);
  });
});
