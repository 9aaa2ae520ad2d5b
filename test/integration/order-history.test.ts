/**
 * `onceflow orders --order-id <id> --events` against DynamoDB Local and fauxqs: an order's history
 * read from its claims and the claiming batches' archives as the pipeline left them.
 */
import { DeleteItemCommand } from '@aws-sdk/client-dynamodb';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { keyOf, ledgerKey } from '../../adapters/dynamo-items.ts';
import { describeOrder, inspectOrder } from '../../cli/order-history.ts';
import type { GeneratedEvent } from '../../harness/generate.ts';
import { cliTarget, createPipeline, uniqueName } from '../support/pipeline.ts';

const event = (
  id: string,
  order: string,
  hour: number,
  o: { status?: string; amount?: string } = {},
): GeneratedEvent => ({
  eventId: id,
  orderId: order,
  customerId: 'C1',
  status: o.status ?? 'placed',
  amount: o.amount ?? '10.00',
  currency: 'EUR',
  eventTime: new Date(Date.UTC(2026, 9, 1, hour, 5)).toISOString(),
});

const body = (batchId: string, events: readonly GeneratedEvent[]) =>
  JSON.stringify({ batchId, events });

describe('an order’s history', () => {
  it('lists each event the order counts once, with the batch counting it, ending on its state', async () => {
    const p = await createPipeline();
    const prefix = uniqueName('history');
    const [a, b, c] = ['a', 'b', 'c'].map((x) => `${prefix}-${x}`);
    await p.deliverUntilDone([body(`${a}`, [event('e1', 'o1', 9), event('x1', 'o2', 9)])]);
    // A copy of e1, and the order paid.
    await p.deliverUntilDone([
      body(`${b}`, [event('e1', 'o1', 9), event('e2', 'o1', 11, { status: 'paid' })]),
    ]);
    // e2 again with another amount (a conflict), and an event older than the state.
    await p.deliverUntilDone([
      body(`${c}`, [
        event('e2', 'o1', 11, { status: 'paid', amount: '99.00' }),
        event('e0', 'o1', 8, { status: 'placed', amount: '5.00' }),
      ]),
    ]);

    const report = await inspectOrder(cliTarget(p), 'o1');
    expect(report).toMatchObject({ orderId: 'o1', status: 'paid', eventId: 'e2', unread: [] });
    expect(report?.events.map((e) => [e.eventId, e.batchId, e.amount, e.current])).toEqual([
      ['e0', c, '5.00', false],
      ['e1', a, '10.00', false],
      ['e2', b, '10.00', true],
    ]);
    const text = describeOrder(report ?? expect.unreachable());
    expect(text).toContain('order o1 of customer C1: paid, 10.00 EUR at 2026-10-01T11:05:00.000Z');
    expect(text).toContain('3 events counted, oldest first');
    expect(text).toMatch(new RegExp(`e2 +│ paid +│ +10\\.00 │ EUR +│ ${b} │ ◀ state`));
    expect(await inspectOrder(cliTarget(p), uniqueName('never'))).toBeUndefined();
  });

  it('names a counting batch whose archive is gone instead of its events', async () => {
    const p = await createPipeline();
    const prefix = uniqueName('lost');
    const [a, b] = [`${prefix}-a`, `${prefix}-b`];
    await p.deliverUntilDone([body(a, [event('e1', 'o1', 9), event('e2', 'o1', 9)])]);
    await p.deliverUntilDone([body(b, [event('e3', 'o1', 10)])]);
    const entry = await new DynamoLedger(p.clients.dynamo, p.tableName).entry(a);
    if (!entry) throw new Error(`no ledger entry for ${a}`);
    await p.admin.s3.send(new DeleteObjectCommand({ Bucket: p.bucketName, Key: entry.archiveKey }));

    const report = await inspectOrder(cliTarget(p), 'o1');
    expect(report?.events.map((e) => e.eventId)).toEqual(['e3']);
    expect(report?.unread).toEqual([
      { batchId: a, claims: 2, reason: `its archive ${entry.archiveKey} is missing` },
    ]);
    expect(describeOrder(report ?? expect.unreachable())).toContain(
      `2 more events counted by batch ${a}, not shown: its archive ${entry.archiveKey} is missing`,
    );
  });

  it('names a counting batch whose ledger entry expired or whose archive is not a batch, and the state’s event left unshown', async () => {
    const p = await createPipeline();
    const prefix = uniqueName('unread');
    const [a, b, c] = [`${prefix}-a`, `${prefix}-b`, `${prefix}-c`];
    await p.deliverUntilDone([body(a, [event('e1', 'o1', 9)])]);
    await p.deliverUntilDone([body(b, [event('e2', 'o1', 10)])]);
    await p.deliverUntilDone([body(c, [event('e3', 'o1', 11, { status: 'paid' })])]);
    const ledger = new DynamoLedger(p.clients.dynamo, p.tableName);
    // a's entry gone, as the ledger's retention removes it (its claims outlive it by a day).
    await p.admin.dynamo.send(
      new DeleteItemCommand({ TableName: p.tableName, Key: keyOf(ledgerKey(a)) }),
    );
    // c's archive, the state's batch, written over with what is not a batch.
    const archived = await ledger.entry(c);
    if (!archived) throw new Error(`no ledger entry for ${c}`);
    await p.admin.s3.send(
      new PutObjectCommand({ Bucket: p.bucketName, Key: archived.archiveKey, Body: 'not json' }),
    );

    const report = await inspectOrder(cliTarget(p), 'o1');
    expect(report).toMatchObject({ status: 'paid', eventId: 'e3' });
    expect(report?.events.map((e) => e.eventId)).toEqual(['e2']);
    expect(report?.unread).toEqual([
      { batchId: a, claims: 1, reason: 'its ledger entry expired with the retention' },
      {
        batchId: c,
        claims: 1,
        reason: expect.stringMatching(
          new RegExp(`^its archive ${archived.archiveKey} is not a batch: .+`),
        ),
      },
    ]);
    const text = describeOrder(report ?? expect.unreachable());
    expect(text).toContain(
      `1 more event counted by batch ${a}, not shown: its ledger entry expired with the retention`,
    );
    expect(text).toContain("the state's event e3 is not among those shown");
  });
});
