import { BatchWriteItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoLedger, ledgerItem } from '../../adapters/dynamo.ts';
import { ingestSettings } from '../../adapters/wiring.ts';
import { status } from '../../cli/commands/status.ts';
import type { Target } from '../../cli/target.ts';
import { createWatchHandler } from '../../functions/watch-pending.ts';
import { lambdaContext } from '../../local/lambda-context.ts';
import { waitFor } from '../../local/net.ts';
import { loadIngestConfig } from '../../shared/config.ts';
import { planBatch } from '../../shared/ingest.ts';
import { validateBatch } from '../../shared/schema.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { seedBatches } from '../support/fixtures.ts';
import { placedEvent } from '../support/hours.ts';
import { createPipeline, uniqueName } from '../support/pipeline.ts';

/** Records every DynamoDB command a client sends, and the items each read returned. */
const recordCalls = (client: DynamoDBClient) => {
  const calls: { command: string; items: number; index?: string }[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      const output = out.output as { Items?: unknown[]; Responses?: Record<string, unknown[]> };
      const input = args.input as { IndexName?: string };
      calls.push({
        command: context.commandName ?? '',
        items:
          output.Items?.length ??
          Object.values(output.Responses ?? {}).reduce((n, r) => n + r.length, 0),
        ...(input.IndexName ? { index: input.IndexName } : {}),
      });
      return out;
    },
    { step: 'initialize', name: 'recordCalls' },
  );
  return calls;
};

const batchOf = (batchId: string, orderId: string) => {
  const parsed = validateBatch({
    batchId,
    events: [placedEvent(orderId)],
  });
  if (!parsed.ok) throw new Error(parsed.detail);
  return parsed.batch;
};

describe('onceflow status on a large ledger', () => {
  it('reads only the pending entries and the totals items when the ledger holds 100,000 batches', async () => {
    const p = await createPipeline();
    const settings = ingestSettings(loadIngestConfig(p.env));
    // The reference stream through ingest: the totals count what it applied.
    await p.deliverUntilDone(seedBatches());

    // 100,000 more ledger entries, all applied (as a table after months of traffic holds them).
    const applied = 100_000;
    const now = Date.now();
    const requests: Promise<unknown>[] = [];
    const put = async (items: ReturnType<typeof ledgerItem>[]) => {
      let unprocessed = items.map((Item) => ({ PutRequest: { Item } }));
      while (unprocessed.length > 0) {
        const out = await p.admin.dynamo.send(
          new BatchWriteItemCommand({ RequestItems: { [p.tableName]: unprocessed } }),
        );
        unprocessed = (out.UnprocessedItems?.[p.tableName] ?? []) as typeof unprocessed;
      }
    };
    const template = planBatch(batchOf('template', 'o-template'), settings);
    let chunk: ReturnType<typeof ledgerItem>[] = [];
    for (let i = 0; i < applied; i++) {
      const batchId = `old-${i}`;
      const item = ledgerItem(
        { ...template, batch: { ...template.batch, batchId } },
        undefined,
        now,
      );
      // A committed entry: its part done, out of the pending index (what the last commit does).
      // Only the attributes a committed entry keeps that matter to a reader: the seed is 100,000
      // writes on two cores, and every byte is paid for in DynamoDB Local's time.
      const { pk, sk, kind, parts } = item;
      if (!pk || !sk || !kind || !parts) throw new Error('ledger item without its keys');
      chunk.push({ pk, sk, kind, parts, doneParts: { NS: ['0'] } });
      if (chunk.length === 25) {
        requests.push(put(chunk));
        chunk = [];
      }
      if (requests.length === 16) await Promise.all(requests.splice(0));
    }
    await Promise.all(requests);

    // Five batches in progress: claimed, never committed (a crash between claim and commit).
    const ledger = new DynamoLedger(p.admin.dynamo, p.tableName);
    const pendingIds = Array.from({ length: 5 }, (_, i) => uniqueName(`pending-${i}`));
    for (const [i, batchId] of pendingIds.entries())
      await ledger.claim(
        planBatch(batchOf(batchId, `o-p${i}`), settings),
        undefined,
        now - i * 1000,
      );

    const calls = recordCalls(p.admin.dynamo);
    const target: Target = {
      kind: 'local',
      endpoint: undefined,
      region: 'us-east-1',
      stackName: 'test',
      clients: p.admin,
      outputs: p.outputs,
      output: (name) => p.outputs[name] ?? '',
    };
    const s = await status(target);
    expect(s.ledger).toMatchObject({ applied: seedBatches().length, pending: 5 });
    expect(s.ledger.appliedEvents).toBeGreaterThan(0);
    expect(s.ledger.oldestPending?.batchId).toBe(pendingIds[4]);
    // Claimed 4 s before `now`: its age in whole seconds, between then and the answer.
    const claimedAt = now - 4000;
    expect(s.ledger.oldestPending?.receivedAt).toBe(new Date(claimedAt).toISOString());
    expect(s.ledger.oldestPending?.ageSeconds).toBeGreaterThanOrEqual(4);
    expect(s.ledger.oldestPending?.ageSeconds).toBeLessThanOrEqual(
      Math.round((Date.now() - claimedAt) / 1000),
    );

    // No scan; the pending index's queries returned the five entries and nothing else.
    const dynamoCalls = calls.filter((c) => c.command !== 'GetQueueAttributesCommand');
    expect(dynamoCalls.map((c) => c.command)).not.toContain('ScanCommand');
    const queried = dynamoCalls.filter((c) => c.command === 'QueryCommand');
    expect(queried.every((c) => c.index === 'PendingBatches')).toBe(true);
    expect(queried.reduce((n, c) => n + c.items, 0)).toBe(5);
    const read = dynamoCalls.reduce((n, c) => n + c.items, 0);
    // The pending entries plus at most one totals item per counter shard.
    expect(read).toBeLessThanOrEqual(5 + settings.counterShards);
  });

  it('reports the batches in progress and the oldest one’s age from the pending watcher, and none once they commit', async () => {
    const p = await createPipeline();
    const settings = ingestSettings(loadIngestConfig(p.env));
    const ledger = new DynamoLedger(p.admin.dynamo, p.tableName);
    const now = Date.now();
    const handler = createWatchHandler({
      pendingBatches: () => ledger.pendingBatches(),
      now: () => now,
    });
    const invoke = () => handler({}, lambdaContext('watch-pending', 30_000));
    expect(await invoke()).toEqual({ pending: 0, oldestAgeSeconds: 0, oldest: [] });

    const stuck = uniqueName('stuck');
    await ledger.claim(planBatch(batchOf(stuck, 'o-stuck'), settings), undefined, now - 1_200_000);
    await p.deliverUntilDone(seedBatches());
    // The watcher reads the pending index, eventually consistent (and lagging at the edge, as
    // DynamoDB's may): the claim shows once the index has caught up.
    let report = await invoke();
    await waitFor(
      async () => {
        report = await invoke();
        return report.pending > 0;
      },
      {
        timeoutMs: DEADLINE_MS,
        what: 'the pending index to show the claim',
      },
    );
    expect(report).toMatchObject({ pending: 1, oldestAgeSeconds: 1200 });
    expect(report.oldest.map((b) => b.batchId)).toEqual([stuck]);
  });
});
