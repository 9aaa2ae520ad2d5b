/**
 * `onceflow replay dlq --dry-run` against fauxqs and DynamoDB Local: a DLQ's messages read with
 * the batch each carries and the ledger's view of it, and every one left visible in the DLQ.
 */
import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { queueDepth } from '../../adapters/sqs.ts';
import { peekDlq } from '../../cli/commands/dlq-peek.ts';
import { seedBatches } from '../support/fixtures.ts';
import { cliTarget, createPipeline, uniqueName } from '../support/pipeline.ts';

describe('a DLQ read before it is moved back', () => {
  it('lists every message once with its batch and the ledger’s view, and leaves them all visible', async () => {
    const p = await createPipeline();
    const dlq = p.outputs.OrdersDlqUrl ?? '';
    const [first = '', ...others] = seedBatches();
    await p.deliverUntilDone([first]);
    // The four seed batches (the first applied), a body that is not JSON, and ten batches the
    // ledger never saw: more than one receive's ten.
    const fresh = Array.from({ length: 10 }, (_, i) =>
      JSON.stringify({ batchId: uniqueName(`dlq-${i}`), events: [] }),
    );
    const bodies = [first, ...others, 'not json {', ...fresh];
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
    expect(entries).toHaveLength(15);
    expect(new Set(entries.map((e) => e.messageId)).size).toBe(15);
    const byBatch = new Map(entries.map((e) => [e.batchId, e]));
    expect(byBatch.get('make-orders-1')?.ledger).toBe('applied');
    expect(byBatch.get('make-orders-2')?.ledger).toBe('absent');
    expect(entries.filter((e) => e.ledger === 'absent')).toHaveLength(13);
    const unnamed = entries.filter((e) => e.batchId === undefined);
    expect(unnamed).toEqual([expect.objectContaining({ bytes: 10, receives: 0 })]);
    expect(unnamed[0]?.ledger).toBeUndefined();
    expect(entries.every((e) => e.receives === 0 && e.sentAt !== undefined)).toBe(true);
    expect(await queueDepth(p.admin.sqs, dlq)).toEqual({ visible: 15, inFlight: 0, delayed: 0 });

    // Read again: the same messages, each read once more; a limit reads no more than it asks.
    const again = await peekDlq(cliTarget(p), dlq, 100);
    expect(new Set(again.map((e) => e.messageId))).toEqual(
      new Set(entries.map((e) => e.messageId)),
    );
    expect(again.every((e) => e.receives === 1)).toBe(true);
    expect(await peekDlq(cliTarget(p), dlq, 4)).toHaveLength(4);
    expect(await queueDepth(p.admin.sqs, dlq)).toEqual({ visible: 15, inFlight: 0, delayed: 0 });
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
