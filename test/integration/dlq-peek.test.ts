/**
 * `onceflow replay dlq --dry-run` against fauxqs and DynamoDB Local: a DLQ's messages read with
 * the batch each carries and the ledger's view of it, and every one left visible in the DLQ.
 */
import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { queueDepth } from '../../adapters/sqs.ts';
import { dlqTable, peekDlq } from '../../cli/commands/dlq-peek.ts';
import { seedBatches } from '../support/fixtures.ts';
import { cliTarget, createPipeline, uniqueName } from '../support/pipeline.ts';

describe('a DLQ read before it is moved back', () => {
  it('lists every message once with its batch and the ledger’s view, and leaves them all visible', async () => {
    const p = await createPipeline();
    const dlq = p.outputs.OrdersDlqUrl ?? '';
    const [first = '', ...others] = seedBatches();
    await p.deliverUntilDone([first]);
    // The four seed batches (the first applied), a body that is not JSON, ten batches the ledger
    // never saw (more than one receive's ten), and two naming ids the contract bans: one longer
    // than a DynamoDB key may be, one empty.
    const fresh = Array.from({ length: 10 }, (_, i) =>
      JSON.stringify({ batchId: uniqueName(`dlq-${i}`), events: [] }),
    );
    const banned = ['x'.repeat(3000), ''].map((batchId) => JSON.stringify({ batchId, events: [] }));
    const bodies = [first, ...others, 'not json {', ...fresh, ...banned];
    for (let i = 0; i < bodies.length; i += 10)
      await p.admin.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: dlq,
          Entries: bodies
            .slice(i, i + 10)
            .map((MessageBody, j) => ({ Id: String(j), MessageBody })),
        }),
      );

    const entries = await peekDlq(cliTarget(p), dlq, 100);
    expect(entries).toHaveLength(17);
    expect(new Set(entries.map((e) => e.messageId)).size).toBe(17);
    expect(entries.map((e) => e.body).sort()).toEqual([...bodies].sort());
    const byBatch = new Map(entries.map((e) => [e.batchId, e]));
    expect(byBatch.get('make-orders-1')?.ledger).toBe('applied');
    expect(byBatch.get('make-orders-2')?.ledger).toBe('absent');
    expect(entries.filter((e) => e.ledger === 'absent')).toHaveLength(13);
    // Shown as carried, never looked up: moved back, ingest would quarantine them.
    expect(byBatch.get('x'.repeat(3000))?.ledger).toBe('invalid');
    expect(byBatch.get('')?.ledger).toBe('invalid');
    const table = dlqTable(entries);
    expect(table).toContain(`batch ${'x'.repeat(128)}… (3000 characters)`);
    expect(table).not.toContain('x'.repeat(129));
    expect(table.match(/id outside the contract/g)).toHaveLength(2);
    const unnamed = entries.filter((e) => e.batchId === undefined);
    expect(unnamed).toEqual([expect.objectContaining({ bytes: 10, receives: 0 })]);
    expect(unnamed[0]?.ledger).toBeUndefined();
    expect(entries.every((e) => e.receives === 0 && e.sentAt !== undefined)).toBe(true);
    expect(await queueDepth(p.admin.sqs, dlq)).toEqual({ visible: 17, inFlight: 0, delayed: 0 });

    // Read again: the same messages, each read once more; a limit reads no more than it asks.
    const again = await peekDlq(cliTarget(p), dlq, 100);
    expect(new Set(again.map((e) => e.messageId))).toEqual(
      new Set(entries.map((e) => e.messageId)),
    );
    expect(again.every((e) => e.receives === 1)).toBe(true);
    expect(await peekDlq(cliTarget(p), dlq, 4)).toHaveLength(4);
    expect(await queueDepth(p.admin.sqs, dlq)).toEqual({ visible: 17, inFlight: 0, delayed: 0 });
  });

  it('names the hour an aggregate notification carries, and finds an empty DLQ empty', async () => {
    const p = await createPipeline();
    const dlq = p.outputs.AggregateDlqUrl ?? '';
    expect(await peekDlq(cliTarget(p), dlq, 100)).toEqual([]);
    await p.admin.sqs.send(
      new SendMessageCommand({
        QueueUrl: dlq,
        MessageBody: JSON.stringify({ hour: '2026-10-01T09:00:00Z' }),
        ...(dlq.endsWith('.fifo')
          ? { MessageGroupId: '2026-10-01T09:00:00Z', MessageDeduplicationId: 'h9' }
          : {}),
      }),
    );
    const [entry, ...rest] = await peekDlq(cliTarget(p), dlq, 100);
    expect(rest).toEqual([]);
    expect(entry).toMatchObject({ hour: '2026-10-01T09:00:00Z', receives: 0 });
    expect(entry?.ledger).toBeUndefined();
    expect(await queueDepth(p.admin.sqs, dlq)).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
  });
});
