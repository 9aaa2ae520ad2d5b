import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, inject, it } from 'vitest';
import { DynamoOrderReader } from '../../adapters/dynamo-order-reader.ts';
import { S3Store } from '../../adapters/s3.ts';
import { sendBodies } from '../../adapters/sqs.ts';
import { adminClients } from '../../local/clients.ts';
import { drainQueues } from '../../local/drain.ts';
import { waitFor } from '../../local/net.ts';
import { LocalStateSchema } from '../../local/state.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { expectedHourly, expectedOrders, seedBatches } from '../support/fixtures.ts';
import { parseJson } from '../support/json.ts';
import { launchStart, type Started } from '../support/start.ts';

const ROOT = join(import.meta.dirname, '..', '..');
/** Running, not merely a zombie waiting for whatever adopted it to reap it. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const state = execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' });
  return state.trim() !== '' && !state.trim().startsWith('Z');
};
const childrenOf = (pid: number): number[] =>
  execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
const commandOf = (pid: number) =>
  execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' }).trim();
const stateDir = () => mkdtempSync(join(tmpdir(), 'onceflow-start-'));

/** `npm start` as a user runs it, on the test's assembly, in its own state directory. */
const launch = (args: string[], env: NodeJS.ProcessEnv = process.env): Started => {
  const { assemblyDir, stackName } = inject('assembly');
  return launchStart(['--port', '0', '--assembly', assemblyDir, '--stack', stackName, ...args], {
    env,
  });
};
const RUNNING = 'Ctrl-C stops everything';

/** local.json, read with the schema the CLI reads it with. */
const readState = (dir: string) =>
  parseJson(LocalStateSchema, readFileSync(join(dir, 'local.json'), 'utf8'));

/**
 * An item of the running stack's table written, read without asking for consistency, written
 * again: what that read and a consistent one then answer.
 */
const readAfterWrite = async (local: ReturnType<typeof readState>) => {
  const { dynamo } = adminClients(local.endpoint, local.region);
  const TableName = local.outputs.TableName;
  const Key = { pk: { S: 'probe' }, sk: { S: 'probe' } };
  const write = (v: string) =>
    dynamo.send(new PutItemCommand({ TableName, Item: { ...Key, v: { S: v } } }));
  const read = async (ConsistentRead: boolean) =>
    (await dynamo.send(new GetItemCommand({ TableName, Key, ConsistentRead }))).Item?.v?.S;
  await write('1');
  await read(false);
  await write('2');
  return { eventual: await read(false), consistent: await read(true) };
};

describe('npm start as a process', () => {
  it('serves the stack to any SDK with --keep through local.json and leaves no process behind on Ctrl-C', async () => {
    const dir = stateDir();
    const run = launch(['--keep', '--no-demo', '--state-dir', dir]);
    await run.until(RUNNING);
    // What the template holds that has no local meaning is said, not silently skipped.
    expect(run.output()).toMatch(/not emulated: .*AWS::CloudWatch::Dashboard.*AWS::IAM::Role/);
    expect(run.output()).toMatch(
      /event source mappings \(failed messages retry after 1 s\), 18 alarms$/m,
    );
    // The rules that will run, and when each runs first.
    expect(run.output()).toMatch(
      /scheduled rules \(UTC\): WatchPending rate\(5 minutes\) \(next \d\d:\d\d:\d\d\), FinalizeHours rate\(5 minutes\) \(next \d\d:\d\d:\d\d\)/,
    );
    // And that Ctrl-C discards the data.
    expect(run.output()).toContain(
      'data lives in memory and is discarded on stop (--persist keeps it)',
    );

    const local = readState(dir);
    expect(local.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // Only what the schema names: no SDK-internal field (such as `$source`) leaks into it.
    expect(Object.keys(local.credentials)).toEqual(['accessKeyId', 'secretAccessKey']);
    expect(run.output()).toContain(`Endpoint ${local.endpoint}`);
    const { sqs } = adminClients(local.endpoint, local.region);
    const attrs = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: local.outputs.OrdersQueueUrl,
        AttributeNames: ['VisibilityTimeout'],
      }),
    );
    expect(attrs.Attributes?.VisibilityTimeout).toBe('180');

    const helpers = childrenOf(run.pid);
    expect(helpers.map(commandOf).join('\n')).toMatch(/DynamoDBLocal/);
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
    expect(helpers.filter(alive)).toEqual([]);
    expect(existsSync(join(dir, 'local.json'))).toBe(false);
    expect(existsSync(join(dir, 'runtime.lock'))).toBe(false);
  });

  it('refuses a second start in the same state directory, naming the running one, and runs beside it another with a read lag of its own', async () => {
    const dir = stateDir();
    // The first one's replica lags longer than the test; the one beside it does not lag.
    const first = launch(['--keep', '--no-demo', '--state-dir', dir, '--read-lag', '60000']);
    await first.until(RUNNING);
    const state = readFileSync(join(dir, 'local.json'), 'utf8');
    const { endpoint } = readState(dir);
    const log = join(dir, 'logs');
    const logsBefore = existsSync(log) ? statSync(log).mtimeMs : 0;

    const second = launch(['--keep', '--no-demo', '--state-dir', dir]);
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(
      `✘ onceflow already runs from ${dir}: pid ${first.pid}, endpoint ${endpoint}`,
    );
    expect(second.output()).toContain('--state-dir');
    expect(second.output()).not.toMatch(/\n\s+at /);
    // The first one's state file and logs are untouched, and it still answers.
    expect(readFileSync(join(dir, 'local.json'), 'utf8')).toBe(state);
    expect(existsSync(log) ? statSync(log).mtimeMs : 0).toBe(logsBefore);
    expect((await fetch(endpoint).catch(() => undefined)) !== undefined).toBe(true);

    const besideDir = stateDir();
    const beside = launch(['--keep', '--no-demo', '--state-dir', besideDir, '--read-lag', '0']);
    await beside.until(RUNNING);
    expect(await readAfterWrite(readState(dir))).toEqual({ eventual: '1', consistent: '2' });
    expect(await readAfterWrite(readState(besideDir))).toEqual({ eventual: '2', consistent: '2' });
    // Recorded for the commands that wait the lag out (`drill restore`).
    expect([readState(dir).readLagMs, readState(besideDir).readLagMs]).toEqual([60_000, 0]);
    beside.child.kill('SIGINT');
    first.child.kill('SIGINT');
    expect(await beside.exited).toBe(0);
    expect(await first.exited).toBe(0);
  });

  it('says in one line that DynamoDB Local died and exits non-zero, leaving no process, when it is killed', async () => {
    const dir = stateDir();
    const run = launch(['--keep', '--no-demo', '--state-dir', dir]);
    await run.until(RUNNING);
    const helpers = childrenOf(run.pid);
    const jvm = helpers.find((pid) => commandOf(pid).includes('DynamoDBLocal'));
    expect(jvm).toBeDefined();
    const scratch = /-Djava\.io\.tmpdir=(\S+)/.exec(commandOf(jvm ?? 0))?.[1] ?? '';
    expect(readdirSync(scratch).join()).toMatch(/libsqlite4java/);
    process.kill(jvm ?? 0, 'SIGKILL');
    expect(await run.exited).toBe(1);
    expect(run.output()).toMatch(
      new RegExp(
        `✘ DynamoDB Local \\(pid ${jvm}\\) was killed \\(SIGKILL\\): the local runtime cannot work without it and stops`,
      ),
    );
    expect(run.output()).not.toMatch(/\n\s+at /);
    await waitFor(() => helpers.every((pid) => !alive(pid)), {
      timeoutMs: DEADLINE_MS,
      what: 'the runtime’s helpers to end',
    });
    expect(existsSync(join(dir, 'runtime.lock'))).toBe(false);
    // What the killed JVM unpacked, removed by the runtime rather than left in the temp dir.
    expect(existsSync(scratch)).toBe(false);
  });

  it('takes DynamoDB Local with it when the runtime itself is killed with SIGKILL, and a new start takes its place', async () => {
    const dir = stateDir();
    const run = launch(['--keep', '--no-demo', '--state-dir', dir]);
    await run.until(RUNNING);
    const helpers = childrenOf(run.pid);
    const commands = helpers.map(commandOf).join('\n');
    expect(commands).toMatch(/DynamoDBLocal/);
    // The JVM's temporary directory, where it has unpacked SQLite's native library.
    const scratch = /-Djava\.io\.tmpdir=(\S+)/.exec(commands)?.[1] ?? '';
    expect(readdirSync(scratch).join()).toMatch(/libsqlite4java/);
    run.child.kill('SIGKILL');
    await run.exited;
    await waitFor(() => helpers.every((pid) => !alive(pid)), {
      timeoutMs: DEADLINE_MS,
      what: 'the JVM to be reaped after the runtime died',
    });
    // Killed outright, the JVM deletes nothing; the reaper removed its directory.
    expect(existsSync(scratch)).toBe(false);
    // Its lock is stale: the next start in the directory takes over.
    const next = launch(['--keep', '--no-demo', '--state-dir', dir]);
    await next.until(RUNNING);
    expect(readState(dir).pid).toBe(next.pid);
    next.child.kill('SIGINT');
    expect(await next.exited).toBe(0);
  });

  it('keeps orders, hour objects and a message left in a queue across a restart with --persist', async () => {
    const dir = stateDir();
    const first = launch(['--keep', '--no-demo', '--persist', '--state-dir', dir]);
    await first.until(RUNNING);
    expect(first.output()).toContain(`data kept in ${join(dir, 'data')} across restarts`);
    const before = readState(dir);
    const clients = adminClients(before.endpoint, before.region);
    const table = before.outputs.TableName ?? '';
    const bucket = before.outputs.BucketName ?? '';
    const dlq = before.outputs.OrdersDlqUrl ?? '';
    await sendBodies(clients.sqs, before.outputs.OrdersQueueUrl ?? '', seedBatches());
    await clients.sqs.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'left behind' }));
    const orders = new DynamoOrderReader(clients.dynamo, table);
    const hours = new S3Store(clients.s3, bucket);
    // Every hour published, not just reads that agree twice: an hour still in the aggregate
    // queue's coalescing window would be published after the restart instead.
    const expected = {
      orders: JSON.stringify(expectedOrders()),
      hours: JSON.stringify(expectedHourly()),
    };
    await waitFor(
      async () => {
        const essence = (await hours.listAggregates()).map(({ hour, events, byStatus }) => ({
          hour,
          events,
          byStatus,
        }));
        return (
          JSON.stringify(await orders.listOrders()) === expected.orders &&
          JSON.stringify(essence) === expected.hours
        );
      },
      {
        timeoutMs: DEADLINE_MS,
        what: 'the seed batches to be applied and every hour published',
        intervalMs: 500,
      },
    );
    // And nothing left to deliver that could publish an hour again after the restart.
    await drainQueues(
      clients.sqs,
      [before.outputs.OrdersQueueUrl ?? '', before.outputs.AggregateQueueUrl ?? ''],
      { timeoutMs: DEADLINE_MS },
    );
    const snapshot = {
      orders: JSON.stringify(await orders.listOrders()),
      hours: JSON.stringify(await hours.listAggregates()),
    };
    // The message in the DLQ fires its alarm, which the console says, with CloudWatch's reason.
    await first.until('! alarm ordersDlqMessages: ');
    // From OK, or from no data when its first evaluation came after the message.
    expect(first.output()).toMatch(
      /^! alarm ordersDlqMessages: (OK|INSUFFICIENT_DATA) → ALARM: Threshold Crossed: 1 datapoint \[/m,
    );
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(0);

    const second = launch(['--keep', '--persist', '--state-dir', dir]);
    await second.until(RUNNING);
    // The demo needs an empty stack: it says why it does not run on kept data.
    expect(second.output()).toContain('demo skipped: the kept stack already holds data');
    const after = readState(dir);
    const again = adminClients(after.endpoint, after.region);
    expect(JSON.stringify(await new DynamoOrderReader(again.dynamo, table).listOrders())).toBe(
      snapshot.orders,
    );
    expect(JSON.stringify(await new S3Store(again.s3, bucket).listAggregates())).toBe(
      snapshot.hours,
    );
    const left = await again.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: dlq, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    expect(left.Messages?.map((m) => m.Body)).toEqual(['left behind']);
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
  });

  it('explains how to get Java, or to use LocalStack, when there is none', async () => {
    const run = launch(['--no-demo', '--state-dir', stateDir()], {
      ...process.env,
      PATH: join(ROOT, 'node_modules', '.bin'),
    });
    expect(await run.exited).toBe(1);
    expect(run.output()).toMatch(/DynamoDB Local needs Java 17 or newer/);
    expect(run.output()).toMatch(/apt-get install openjdk-17/);
    expect(run.output()).toMatch(/npm run deploy:localstack/);
    expect(run.output()).not.toMatch(/\n\s+at /);
  });

  it('refuses a retry delay that is not a number of seconds, before starting anything', async () => {
    const run = launch(['--retry-delay', 'abc', '--state-dir', stateDir()]);
    expect(await run.exited).not.toBe(0);
    expect(run.output()).toMatch(/--retry-delay.*abc.*a number of seconds from 0 to 43200/);
  });

  it('refuses a read lag that is not a number of milliseconds, before starting anything', async () => {
    const run = launch(['--read-lag', '1.5', '--state-dir', stateDir()]);
    expect(await run.exited).not.toBe(0);
    expect(run.output()).toMatch(/--read-lag.*1\.5.*a number of milliseconds from 0 to 60000/);
  });

  it('names the stacks of the assembly in one line when --stack names none of them', async () => {
    const { assemblyDir, stackName } = inject('assembly');
    const run = launch(['--no-demo', '--state-dir', stateDir(), '--stack', 'wrong']);
    expect(await run.exited).toBe(1);
    expect(run.output()).toContain(`✘ no stack wrong in ${assemblyDir} (found: ${stackName})`);
    expect(run.output()).not.toMatch(/\n\s+at /);
  });
});
