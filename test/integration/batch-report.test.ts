/**
 * `onceflow batch` against DynamoDB Local and fauxqs: the report on one batch reads its ledger
 * entry, its archived body and the claims on its events as the pipeline left them.
 */
import { describe, expect, it } from 'vitest';
import { ingestSettings } from '../../adapters/wiring.ts';
import { describeBatch, inspectBatch } from '../../cli/commands/batch.ts';
import type { GeneratedEvent } from '../../harness/generate.ts';
import { loadIngestConfig } from '../../shared/config.ts';
import { planBatch } from '../../shared/ingest.ts';
import { validateBatch } from '../../shared/schema.ts';
import { cliTarget, createPipeline, uniqueName } from '../support/pipeline.ts';

const event = (id: string, order: string, hour: number, amount = '10.00'): GeneratedEvent => ({
  eventId: id,
  orderId: order,
  customerId: 'C1',
  status: 'placed',
  amount,
  currency: 'EUR',
  eventTime: new Date(Date.UTC(2026, 9, 1, hour, 5)).toISOString(),
});

const body = (batchId: string, events: readonly GeneratedEvent[]) =>
  JSON.stringify({ batchId, events });

describe('the report on one batch', () => {
  it('names the batch that counts each event of an applied batch: its own, a duplicate’s, a conflict’s', async () => {
    const p = await createPipeline();
    const prefix = uniqueName('report');
    const first = `${prefix}-a`;
    const second = `${prefix}-b`;
    await p.deliverUntilDone([body(first, [event('e1', 'o1', 9), event('e2', 'o1', 9)])]);
    // e1 again as it was, e2 with another amount, e3 new: applied, one counted.
    const before = Date.now();
    await p.deliverUntilDone([
      body(second, [event('e1', 'o1', 9), event('e2', 'o1', 9, '99.00'), event('e3', 'o2', 10)]),
    ]);

    const report = await inspectBatch(cliTarget(p), second);
    expect(report).toMatchObject({
      batchId: second,
      state: 'applied',
      parts: 1,
      committedParts: 1,
      archived: true,
      fates: { counted: 1, duplicate: 1, conflict: 1, 'too-late': 0, unclaimed: 0 },
    });
    expect(report?.events).toEqual([
      {
        orderId: 'o1',
        eventId: 'e1',
        eventTime: '2026-10-01T09:05:00.000Z',
        fate: 'duplicate',
        claimedBy: first,
      },
      {
        orderId: 'o1',
        eventId: 'e2',
        eventTime: '2026-10-01T09:05:00.000Z',
        fate: 'conflict',
        claimedBy: first,
      },
      { orderId: 'o2', eventId: 'e3', eventTime: '2026-10-01T10:05:00.000Z', fate: 'counted' },
    ]);
    expect(Date.parse(report?.receivedAt ?? '')).toBeGreaterThanOrEqual(before - 1000);
    expect(report?.lateHours).toBeUndefined();
    if (!report?.fates) throw new Error('no report on the events');
    const text = describeBatch(report);
    expect(text).toContain(`batch ${second}: applied (1 of 1 part committed)`);
    expect(text).toContain(
      'events      3: 1 counted, 1 duplicate, 1 conflict, 0 too late, 0 unclaimed',
    );
    // The conflict was quarantined under this batch's id: the command to read it is named.
    expect(text).toContain(`rejects     onceflow rejects --batch-id ${second}`);
    expect(describeBatch({ ...report, fates: { ...report.fates, conflict: 0 } })).not.toContain(
      'rejects ',
    );
    expect((await inspectBatch(cliTarget(p), first))?.fates).toMatchObject({ counted: 2 });
  });

  it('reports a batch claimed but not committed as pending, its events unclaimed or refused too late', async () => {
    const p = await createPipeline();
    const settings = ingestSettings(loadIngestConfig(p.env));
    const batchId = uniqueName('stalled');
    const text = body(batchId, [event('e1', 'o1', 8), event('e2', 'o2', 9)]);
    const parsed = validateBatch(JSON.parse(text));
    if (!parsed.ok) throw new Error(parsed.detail);
    const plan = planBatch(parsed.batch, settings);
    // What a delivery that stopped after archiving, claiming and deciding its late hours left.
    await p.ports.archive.putOnce(plan.archiveKey, text);
    await p.ports.ledger.claim(plan, undefined, Date.now());
    await p.ports.ledger.recordLateHours(plan, ['2026-10-01T09:00:00Z']);

    const report = await inspectBatch(cliTarget(p), batchId);
    expect(report).toMatchObject({
      state: 'pending',
      committedParts: 0,
      archived: true,
      lateHours: ['2026-10-01T09:00:00Z'],
      fates: { counted: 0, duplicate: 0, conflict: 0, 'too-late': 1, unclaimed: 1 },
    });
    expect(report?.events?.map((e) => [e.eventId, e.fate])).toEqual([
      ['e1', 'unclaimed'],
      ['e2', 'too-late'],
    ]);
    // Its archive can resume it: the command is named.
    if (!report) throw new Error('no report');
    const described = describeBatch(report);
    expect(described).toContain(
      `resume      onceflow replay archive --batch-id ${batchId} (or onceflow replay dlq, if its message is in the DLQ)`,
    );
    // Its too-late part is in the quarantine under its id, with no conflict beside it.
    expect(described).toContain('too late    2026-10-01T09:00:00Z (refused and quarantined)');
    expect(described).toContain(`rejects     onceflow rejects --batch-id ${batchId}`);
  });

  it('says nothing of a batch the ledger never saw, and names no events when the archive is gone', async () => {
    const p = await createPipeline();
    expect(await inspectBatch(cliTarget(p), uniqueName('never'))).toBeUndefined();

    const settings = ingestSettings(loadIngestConfig(p.env));
    const batchId = uniqueName('unarchived');
    const parsed = validateBatch(JSON.parse(body(batchId, [event('e1', 'o1', 8)])));
    if (!parsed.ok) throw new Error(parsed.detail);
    await p.ports.ledger.claim(planBatch(parsed.batch, settings), undefined, Date.now());
    const report = await inspectBatch(cliTarget(p), batchId);
    expect(report).toMatchObject({ state: 'pending', archived: false });
    expect(report?.events).toBeUndefined();
    expect(report?.fates).toBeUndefined();
    // Without an archive there is nothing to resume it from: no command is named.
    if (!report) throw new Error('no report');
    expect(describeBatch(report)).not.toContain('resume ');
  });
});
