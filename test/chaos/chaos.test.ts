import { DescribeTableCommand, DescribeTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { ListBucketsCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, ListQueuesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CRASH_POINTS, formatSummary, runChaos, runSchedule } from '../../harness/chaos.ts';
import { OnceflowStack } from '../../infra/onceflow-stack.ts';
import { readSettings } from '../../infra/settings.ts';
import { adminClients } from '../../local/clients.ts';
import { LOCAL_REGION } from '../../local/emulators.ts';
import type { StackCopy } from '../../local/stack-copy.ts';
import { loadStack } from '../../local/template.ts';
import { synthAssembly } from '../support/assembly.ts';

describe('chaos schedules', () => {
  // The widest run on the stack without a coalescing window (a standard aggregate queue: hours
  // published at once, so a schedule takes no queue delays); the default stack, FIFO aggregate
  // queue included, runs a fresh random seed through `onceflow chaos` in the CLI tests.
  let unwindowed: ReturnType<typeof synthAssembly> | undefined;
  beforeAll(() => {
    unwindowed = synthAssembly((app, name) => {
      const settings = readSettings((k) => (k === 'aggregateWindowSeconds' ? '0' : undefined));
      return new OnceflowStack(app, name, { settings });
    });
  });
  afterAll(() => unwindowed?.remove());

  it('loses nothing and counts nothing twice over 100 schedules with a fixed seed, every crash point covered', {
    // About 3 minutes alone on two cores; past 10 at a load of 14 (2026-12-08).
    timeout: 1_800_000,
  }, async () => {
    const summary = await runChaos({
      endpoint: inject('endpoint'),
      assemblyDir: unwindowed?.assemblyDir ?? '',
      schedules: 100,
      seed: 2026,
      orders: 10,
    });
    console.log(`chaos, seed 2026: ${formatSummary(summary)}`);
    expect(summary.failures).toEqual([]);
    expect({
      lost: summary.lost,
      doubleCounted: summary.doubleCounted,
      staleOverwrites: summary.staleOverwrites,
      mismatches: summary.mismatches,
    }).toEqual({
      lost: 0,
      doubleCounted: 0,
      staleOverwrites: 0,
      mismatches: 0,
    });
    expect(summary.crashPoints).toEqual({ covered: CRASH_POINTS.length, total: 16 });
    expect(summary.events).toBeGreaterThan(1000);
    // The seed draws 409s on archive writes, transaction conflicts on commits (some on every
    // attempt the ledger makes), stale reads of orders and schedules with batches at the
    // contract's bounds.
    expect(summary.s3Conflicts).toBeGreaterThan(0);
    expect(summary.transactionConflicts).toBeGreaterThan(0);
    expect(summary.wideSchedules).toBeGreaterThan(0);
    // Orders settled from reads another environment's write had overtaken.
    expect(summary.staleReads).toBeGreaterThan(0);
    // Hour notifications failed on SQS's side, and sent again.
    expect(summary.entryFailures).toBeGreaterThan(0);
    // Batch reads DynamoDB answered in part, the rest asked for again.
    expect(summary.partialReads).toBeGreaterThan(0);
    // Queries, scans and listings answered one item a page, followed to the end.
    expect(summary.shortPages).toBeGreaterThan(0);
    // Applied events re-sent in new batches, some with other content, reported each once.
    expect(summary.resentEvents).toBeGreaterThan(0);
    expect(summary.eventConflicts).toBeGreaterThan(0);
    // And the table restored to an earlier copy, then recovered by the runbook's steps.
    expect(summary.restores).toBeGreaterThan(0);
    // Hours finalized; events later than the lateness amended final hours under amend, and were
    // refused under quarantine; every version read kept the lifecycle's promise (no mismatch).
    expect(summary.lateSchedules).toBe(50);
    expect(summary.quarantineSchedules).toBe(50);
    expect(summary.finalizedHours).toBeGreaterThan(0);
    expect(summary.amendedHours).toBeGreaterThan(0);
    expect(summary.tooLate).toBeGreaterThan(0);
    expect(summary.versionsRead).toBeGreaterThan(summary.finalizedHours);
  });
});

describe('the stack chaos runs on', () => {
  it('has every queue attribute, redrive policy, key schema and TTL the template defines', async () => {
    const { assemblyDir } = inject('assembly');
    const { template } = loadStack(assemblyDir);
    const resources = Object.entries(template.Resources);
    const admin = adminClients(inject('endpoint'), LOCAL_REGION);
    let checked = false;
    // Checked as the schedule is told of its copy: a schedule deletes its copy when it ends.
    const compare = async (copy: StackCopy) => {
      const queues = resources.filter(([, r]) => r.Type === 'AWS::SQS::Queue');
      expect(queues).toHaveLength(4);
      for (const [id, resource] of queues) {
        const local = copy.stack.queues.find((q) => q.logicalId === id);
        if (!local) throw new Error(`chaos has no queue ${id}`);
        const { Attributes: actual = {} } = await admin.sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: local.url, AttributeNames: ['All'] }),
        );
        const p = resource.Properties;
        for (const key of [
          'VisibilityTimeout',
          'MessageRetentionPeriod',
          'MaximumMessageSize',
        ] as const) {
          if (p[key] !== undefined) expect(actual[key], `${id} ${key}`).toBe(String(p[key]));
        }
        const policy = p.RedrivePolicy as
          | { deadLetterTargetArn: { 'Fn::GetAtt': [string, string] }; maxReceiveCount: number }
          | undefined;
        if (policy) {
          const dlq = copy.stack.queues.find(
            (q) => q.logicalId === policy.deadLetterTargetArn['Fn::GetAtt'][0],
          );
          expect(JSON.parse(actual.RedrivePolicy ?? '{}')).toEqual({
            deadLetterTargetArn: dlq?.arn,
            maxReceiveCount: policy.maxReceiveCount,
          });
        } else expect(actual.RedrivePolicy, id).toBeUndefined();
      }

      const [[, table] = []] = resources.filter(([, r]) => r.Type.startsWith('AWS::DynamoDB::'));
      const tableName = copy.outputs.TableName ?? '';
      const described = await admin.dynamo.send(new DescribeTableCommand({ TableName: tableName }));
      expect(described.Table?.KeySchema).toEqual(table?.Properties.KeySchema);
      const ttl = await admin.dynamo.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
      const spec = table?.Properties.TimeToLiveSpecification as { AttributeName: string };
      expect(ttl.TimeToLiveDescription?.AttributeName).toBe(spec.AttributeName);
      expect(ttl.TimeToLiveDescription?.TimeToLiveStatus).toBe('ENABLED');
      checked = true;
    };
    let copy: StackCopy | undefined;
    await runSchedule({
      endpoint: inject('endpoint'),
      assemblyDir,
      seed: 7,
      orders: 3,
      onProvisioned: async (c) => {
        copy = c;
        await compare(c);
      },
    });
    expect(checked).toBe(true);
    if (!copy) throw new Error('the schedule provisioned nothing');
    // And once the schedule has ended, its copy is gone from the emulators.
    const { QueueUrls = [] } = await admin.sqs.send(
      new ListQueuesCommand({ QueueNamePrefix: copy.stack.stackName }),
    );
    expect(QueueUrls).toEqual([]);
    for (const table of copy.stack.tables)
      await expect(
        admin.dynamo.send(new DescribeTableCommand({ TableName: table.name })),
      ).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    const { Buckets = [] } = await admin.s3.send(new ListBucketsCommand({}));
    const bucket = copy.outputs.BucketName;
    expect(Buckets.map((b) => b.Name)).not.toContain(bucket);
  });
});
