/**
 * A FIFO batch's groups processed concurrently (`processFifoGroups`): whatever the groups, their
 * interleaving in the batch and which records fail, each group runs in order and stops at its
 * first failure, and only a batch that failed whole fails the invocation.
 */
import { FullBatchFailureError } from '@aws-lambda-powertools/batch';
import type { SQSRecord } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { processFifoGroups } from '../../functions/sqs-record.ts';
import { lambdaContext } from '../../local/lambda-context.ts';
import { toSqsRecord } from '../../local/sqs-event.ts';

const record = (id: number, group: string): SQSRecord =>
  toSqsRecord(
    {
      MessageId: `m${id}`,
      ReceiptHandle: 'r',
      Body: '{}',
      Attributes: { SentTimestamp: '1', MessageGroupId: group, MessageDeduplicationId: `d${id}` },
    },
    'arn:aws:sqs:us-east-1:000000000000:aggregate.fifo',
    'us-east-1',
  );

/** Up to ten records over up to four groups, some of them failing. */
const batches = fc
  .array(fc.record({ group: fc.constantFrom('a', 'b', 'c', 'd'), fails: fc.boolean() }), {
    minLength: 1,
    maxLength: 10,
  })
  .map((specs) => specs.map((spec, id) => ({ ...spec, record: record(id, spec.group) })));

describe('processing a FIFO batch group by group', () => {
  it('runs each group in order up to its first failure, and fails exactly the rest of that group', async () => {
    await fc.assert(
      fc.asyncProperty(batches, fc.nat(3), async (batch, jitter) => {
        const handled: string[] = [];
        const handle = async (r: SQSRecord) => {
          // Records of other groups finish in any order relative to one another.
          for (let i = 0; i < (Number(r.messageId.slice(1)) + jitter) % 4; i++) await null;
          handled.push(r.messageId);
          if (batch.find((b) => b.record.messageId === r.messageId)?.fails) throw new Error('no');
        };
        // What each group must do: its records in order, up to and including its first failure.
        const expectedHandled = new Map<string, string[]>();
        const expectedFailed = new Set<string>();
        const stopped = new Set<string>();
        for (const { group, fails, record: r } of batch) {
          if (stopped.has(group)) {
            expectedFailed.add(r.messageId);
            continue;
          }
          expectedHandled.set(group, [...(expectedHandled.get(group) ?? []), r.messageId]);
          if (fails) {
            stopped.add(group);
            expectedFailed.add(r.messageId);
          }
        }
        const event = { Records: batch.map((b) => b.record) };
        const outcome = await processFifoGroups(event, handle, lambdaContext('fifo', 30_000)).then(
          (response) => ({ failed: response.batchItemFailures.map((f) => f.itemIdentifier) }),
          (error: unknown) => ({ error }),
        );
        for (const [group, ids] of expectedHandled)
          expect(
            handled.filter((id) =>
              batch.some((b) => b.record.messageId === id && b.group === group),
            ),
          ).toEqual(ids);
        if (expectedFailed.size === batch.length) {
          expect(outcome).toEqual({ error: expect.any(FullBatchFailureError) });
        } else {
          expect('failed' in outcome && [...outcome.failed].sort()).toEqual(
            [...expectedFailed].sort(),
          );
        }
      }),
    );
  });
});
