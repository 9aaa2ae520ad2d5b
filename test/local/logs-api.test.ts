/**
 * CloudWatch Logs on the local edge: the functions' log groups served from the runtime's log
 * files to the SDK's own client, to `onceflow logs` on its AWS path (`--target localstack`), and
 * to the AWS CLI when the machine has it.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CloudWatchLogsClient,
  DescribeLogGroupsCommand,
  FilterLogEventsCommand,
  type FilterLogEventsCommandInput,
  InvalidParameterException,
  ResourceNotFoundException,
} from '@aws-sdk/client-cloudwatch-logs';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../local/emulators.ts';
import { waitFor } from '../../local/net.ts';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { loadStack, physicalName } from '../../local/template.ts';
import { awsCli, awsCliVersion, reportMissingAwsCli } from '../support/aws-cli.ts';
import { follow, onceflow } from '../support/cli.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { sharedDynamoLocal } from '../support/emulators.ts';
import { seedBatches } from '../support/fixtures.ts';
import { parseJson } from '../support/json.ts';
import { uniqueName } from '../support/pipeline.ts';

let runtime: LocalRuntime;
let logs: CloudWatchLogsClient;

const ingestGroup = () => {
  const fn = runtime.stack.functions.find((f) => f.logicalId.startsWith('IngestOrders'));
  if (!fn) throw new Error('no ingest function in the stack');
  return `/aws/lambda/${fn.name}`;
};

const send = (body: string) =>
  runtime.clients.sqs.send(
    new SendMessageCommand({ QueueUrl: runtime.stack.outputs.OrdersQueueUrl, MessageBody: body }),
  );

const filter = async (input: Omit<FilterLogEventsCommandInput, 'logGroupName'>) =>
  (await logs.send(new FilterLogEventsCommand({ logGroupName: ingestGroup(), ...input }))).events ??
  [];

/** onceflow's options for its AWS path, pointed at the runtime's edge as at LocalStack. */
const awsPath = () => [
  '--target',
  'localstack',
  '--endpoint',
  runtime.endpoint,
  '--stack-name',
  runtime.stack.stackName,
];

beforeAll(async () => {
  const { assemblyDir, stackName } = inject('assembly');
  runtime = await startLocalRuntime({
    assemblyDir,
    stackName,
    localStackName: uniqueName('logs-api'),
    dynamoLocal: sharedDynamoLocal(),
    retryDelaySeconds: 1,
    logDir: mkdtempSync(join(tmpdir(), 'onceflow-logs-')),
  });
  logs = new CloudWatchLogsClient({
    endpoint: runtime.endpoint,
    region: runtime.region,
    credentials: LOCAL_CREDENTIALS,
  });
  for (const body of seedBatches()) await send(body);
  await waitFor(async () => (await filter({ filterPattern: '"batch applied"' })).length === 4, {
    timeoutMs: DEADLINE_MS,
    what: 'four "batch applied" lines in the ingest log group',
  });
});
afterAll(async () => {
  await runtime?.stop();
});

reportMissingAwsCli('its CloudWatch Logs test is');

describe('CloudWatch Logs on the local edge', () => {
  it('filters a function’s log group by terms, phrases, alternatives, exclusions and time, page by page', async () => {
    const applied = await filter({ filterPattern: '"batch applied"' });
    for (const e of applied)
      expect(JSON.parse(e.message ?? '')).toMatchObject({ message: 'batch applied' });
    // Each event carries the time its line records, so a time window selects by it.
    const first = Math.min(...applied.map((e) => e.timestamp ?? 0));
    expect(await filter({ filterPattern: '"batch applied"', startTime: first })).toEqual(applied);
    expect(
      await filter({ filterPattern: '"batch applied"', startTime: Date.now() + 3_600_000 }),
    ).toEqual([]);
    expect(await filter({ filterPattern: 'batch applied' })).toEqual(
      expect.arrayContaining(applied),
    );
    expect(await filter({ filterPattern: '"batch applied" -make-orders-1' })).toHaveLength(3);
    expect(
      await filter({ filterPattern: '?make-orders-1 ?make-orders-2 "batch applied"' }),
    ).toHaveLength(2);

    // Paging: one event a page, every event once, in order.
    const paged: string[] = [];
    let nextToken: string | undefined;
    do {
      const page = await logs.send(
        new FilterLogEventsCommand({
          logGroupName: ingestGroup(),
          filterPattern: '"batch applied"',
          limit: 1,
          ...(nextToken ? { nextToken } : {}),
        }),
      );
      paged.push(...(page.events ?? []).map((e) => e.eventId ?? ''));
      nextToken = page.nextToken;
    } while (nextToken);
    expect(paged).toEqual(applied.map((e) => e.eventId));

    const groups = await logs.send(
      new DescribeLogGroupsCommand({ logGroupNamePrefix: '/aws/lambda/' }),
    );
    expect(groups.logGroups?.map((g) => g.logGroupName)).toContain(ingestGroup());
    await expect(
      logs.send(new FilterLogEventsCommand({ logGroupName: '/aws/lambda/no-such-function' })),
    ).rejects.toBeInstanceOf(ResourceNotFoundException);
    await expect(
      logs.send(
        new FilterLogEventsCommand({
          logGroupName: ingestGroup(),
          filterPattern: '{ $.level = "ERROR" }',
        }),
      ),
    ).rejects.toBeInstanceOf(InvalidParameterException);
  });

  it('serves onceflow logs on its AWS path: the group’s lines, then new ones with --follow, each once', async () => {
    const target = awsPath();
    const printed = await onceflow([
      ...target,
      'logs',
      'ingest',
      '--since',
      '1h',
      '--filter',
      'batch applied',
    ]);
    expect(printed.code, printed.stderr).toBe(0);
    const lines = printed.stdout.trim().split('\n');
    expect(lines).toEqual(
      (await filter({ filterPattern: '"batch applied"' })).map((e) => e.message),
    );

    const follower = follow([...target, 'logs', 'ingest', '--follow', '--filter', 'cloud-follow']);
    try {
      const [first = ''] = seedBatches();
      await send(JSON.stringify({ ...JSON.parse(first), batchId: uniqueName('cloud-follow') }));
      await waitFor(() => follower.stdout().includes('batch applied'), {
        timeoutMs: DEADLINE_MS,
        what: 'logs --follow on the AWS path to print the new batch',
      });
      // Followed by event id: a line is printed once, however many polls return it.
      expect(
        follower
          .stdout()
          .split('\n')
          .filter((l) => l.includes('batch applied')),
      ).toHaveLength(1);
    } finally {
      follower.stop();
    }
  });

  it('reads duplicates on onceflow status’s AWS path from the metric the function logs', async () => {
    // The first seed batch again: recognised by the ledger, counted in DuplicateBatches.
    await send(seedBatches()[0] ?? '');
    // Its metric line, written as the invocation ends.
    await waitFor(async () => (await filter({ filterPattern: 'DuplicateBatches' })).length === 1, {
      timeoutMs: DEADLINE_MS,
      what: 'the redelivered batch to be counted',
    });
    const printed = await onceflow([...awsPath(), 'status', '--json']);
    expect(printed.code, printed.stderr).toBe(0);
    expect(parseJson(v.object({ duplicates: v.number() }), printed.stdout).duplicates).toBe(1);
  });

  it.skipIf(!awsCliVersion)('answers the AWS CLI’s logs filter-log-events', async () => {
    const found = await awsCli(
      runtime,
      'logs',
      'filter-log-events',
      '--log-group-name',
      ingestGroup(),
      '--filter-pattern',
      '"batch applied"',
      '--output',
      'json',
    );
    expect(found.status, found.stderr).toBe(0);
    const { events } = parseJson(
      v.object({ events: v.array(v.object({ message: v.string() })) }),
      found.stdout,
    );
    expect(events.filter((e) => e.message.includes('batch applied')).length).toBeGreaterThanOrEqual(
      4,
    );
  });
});

describe('the local runtime’s log files', () => {
  it('starts each function’s log afresh when a runtime starts, before the function runs', async () => {
    const { assemblyDir, stackName } = inject('assembly');
    const localStackName = uniqueName('fresh-logs');
    const dir = mkdtempSync(join(tmpdir(), 'onceflow-logs-'));
    // The last run's lines, in the files this stack's functions write (`<stack>-<logicalId>`).
    const functionIds = Object.entries(loadStack(assemblyDir, stackName).template.Resources)
      .filter(([, r]) => r.Type === 'AWS::Lambda::Function')
      .map(([id]) => id);
    const stale = functionIds.map((id) => `${physicalName(localStackName, id, 64)}.log`);
    for (const file of stale)
      writeFileSync(join(dir, file), `${JSON.stringify({ DuplicateBatches: 5 })}\n`);
    writeFileSync(join(dir, 'another-stack-fn.log'), 'kept\n');
    const fresh = await startLocalRuntime({
      assemblyDir,
      stackName,
      localStackName,
      dynamoLocal: sharedDynamoLocal(),
      logDir: dir,
    });
    try {
      // Each of its functions' files was written with stale lines; none of them has run yet.
      const files = fresh.stack.functions.map((f) => `${f.name}.log`);
      expect(files.length).toBeGreaterThanOrEqual(4);
      expect(stale).toEqual(expect.arrayContaining(files));
      for (const file of files) expect(readFileSync(join(dir, file), 'utf8')).toBe('');
      expect(readFileSync(join(dir, 'another-stack-fn.log'), 'utf8')).toBe('kept\n');
    } finally {
      await fresh.stop();
    }
  });
});
