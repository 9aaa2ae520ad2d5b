/**
 * `onceflow replay dlq` against the local edge's message move tasks: a DLQ moved back in as many
 * rounds as its messages take to become visible, and a move task that fails reported as such.
 */
import {
  ListMessageMoveTasksCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { queueDepth } from '../../adapters/sqs.ts';
import { replayDlq } from '../../cli/commands/replay-dlq.ts';
import { CliError } from '../../cli/target.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { seedBatches } from '../support/fixtures.ts';
import { peek } from '../support/peek.ts';
import { cliTarget, createPipeline } from '../support/pipeline.ts';

describe('replay dlq', () => {
  it('moves the visible messages at once and a peeked one in a second round, once visible', async () => {
    const p = await createPipeline();
    const dlq = p.outputs.OrdersDlqUrl ?? '';
    const sqs = p.admin.sqs;
    const [a = '', b = '', c = ''] = seedBatches();
    for (const body of [a, b, c])
      await sqs.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: body }));
    // An operator peeks at one, held until the replay says it waits for it.
    const peeked = await peek(sqs, dlq);

    const notes: string[] = [];
    const progress: number[] = [];
    const replay = await replayDlq(cliTarget(p), 'orders', {
      timeoutMs: DEADLINE_MS,
      onNote: (n) => {
        notes.push(n);
        peeked.letGo();
      },
      onProgress: (moved) => progress.push(moved),
    });
    await peeked.settled();
    expect(replay).toEqual({
      moved: 3,
      status: 'COMPLETED',
      remaining: { visible: 0, inFlight: 0, delayed: 0 },
    });
    // The first task moved the two visible ones; the peeked one waited, then a second task.
    expect(notes).toEqual([
      expect.stringMatching(
        /^1 message\(s\) in flight or delayed in the orders DLQ: waiting up to/,
      ),
    ]);
    const tasks = await sqs.send(
      new ListMessageMoveTasksCommand({ SourceArn: p.outputs.OrdersDlqArn, MaxResults: 10 }),
    );
    expect(tasks.Results?.map((t) => [t.Status, t.ApproximateNumberOfMessagesMoved])).toEqual([
      ['COMPLETED', 1],
      ['COMPLETED', 2],
    ]);
    // Progress counts across rounds: the second task's message is the third moved.
    expect(progress.at(-1)).toBe(3);
    expect(await queueDepth(sqs, p.outputs.OrdersQueueUrl ?? '')).toEqual({
      visible: 3,
      inFlight: 0,
      delayed: 0,
    });
  });

  it('reports a move task that failed with its reason and what it moved', async () => {
    const p = await createPipeline();
    const dlq = p.outputs.OrdersDlqUrl ?? '';
    const sqs = p.admin.sqs;
    // The queue now takes at most 1 KiB (lowered after the messages went to the DLQ).
    await sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: p.outputs.OrdersQueueUrl,
        Attributes: { MaximumMessageSize: '1024' },
      }),
    );
    const small = JSON.stringify({ batchId: 'small', events: [] });
    const large = JSON.stringify({ batchId: 'large', events: [], pad: 'x'.repeat(2048) });
    for (const body of [small, large])
      await sqs.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: body }));

    const replay = replayDlq(cliTarget(p), 'orders', { timeoutMs: DEADLINE_MS });
    await expect(replay).rejects.toBeInstanceOf(CliError);
    await expect(replay).rejects.toThrow(
      /^the move task ended FAILED: could not send 1 messages to the destination.* after moving 1$/,
    );
    // The refused one is still in the DLQ, where the operator can read it (in flight until its
    // visibility timeout ends: the task received it).
    const { visible, inFlight } = await queueDepth(sqs, dlq);
    expect(visible + inFlight).toBe(1);
    expect(await queueDepth(sqs, p.outputs.OrdersQueueUrl ?? '')).toMatchObject({ visible: 1 });
  });
});
