/**
 * `onceflow orders --order-id <id> --events`: which events shaped an order and which batch counts
 * each, read from the order's claims and the claiming batches' archived bodies (their ledger
 * entries name where each is archived).
 */
import Table from 'cli-table3';
import { DynamoLedger } from '../adapters/dynamo.ts';
import { DynamoOrderStore } from '../adapters/dynamo-orders.ts';
import { S3Store } from '../adapters/s3.ts';
import { counted, terminalSafe } from '../local/render.ts';
import { mapLimit } from '../shared/concurrency.ts';
import { InvalidMessageError } from '../shared/errors.ts';
import { type ClaimingBatch, type OrderHistory, orderHistory } from '../shared/order-history.ts';
import type { OrderView } from '../shared/order-state.ts';
import { parseBatchBody } from '../shared/schema.ts';
import type { Target } from './target.ts';

/** Batches read at once (a GetItem and a GetObject each). */
const READS_IN_FLIGHT = 8;

/** A batch's archived events, found through its ledger entry; why not, when they cannot be. */
const claimingBatch = async (
  ledger: DynamoLedger,
  archive: S3Store,
  batchId: string,
): Promise<ClaimingBatch> => {
  const entry = await ledger.entry(batchId);
  if (!entry)
    return { batchId, events: undefined, reason: 'its ledger entry expired with the retention' };
  const body = await archive.getText(entry.archiveKey);
  if (body === undefined)
    return { batchId, events: undefined, reason: `its archive ${entry.archiveKey} is missing` };
  try {
    return { batchId, events: parseBatchBody(body, Number.POSITIVE_INFINITY).events };
  } catch (error) {
    if (!(error instanceof InvalidMessageError)) throw error;
    return {
      batchId,
      events: undefined,
      reason: `its archive ${entry.archiveKey} is not a batch: ${error.detail}`,
    };
  }
};

export type OrderReport = OrderView &
  OrderHistory & {
    /** The event the state holds. */
    readonly eventId: string | undefined;
  };

/** The order's state and history; undefined when the order is unknown. */
export const inspectOrder = async (
  t: Target,
  orderId: string,
): Promise<OrderReport | undefined> => {
  const table = t.output('TableName');
  const stored = await new DynamoOrderStore(t.clients.dynamo, table).orderClaims(orderId);
  if (!stored) return undefined;
  const ledger = new DynamoLedger(t.clients.dynamo, table);
  const archive = new S3Store(t.clients.s3, t.output('BucketName'));
  const batchIds = [...new Set(stored.claims.map((c) => c.batchId))].sort();
  const batches = await mapLimit(batchIds, READS_IN_FLIGHT, (id) =>
    claimingBatch(ledger, archive, id),
  );
  return {
    ...stored.order,
    eventId: stored.stateEventId,
    ...orderHistory({
      orderId,
      stateEventId: stored.stateEventId,
      claims: stored.claims,
      claimOf: stored.claimOf,
      batches,
    }),
  };
};

/** The report as the terminal shows it. */
export const describeOrder = (r: OrderReport): string => {
  const table = new Table({
    head: ['event time', 'event', 'status', 'amount', 'currency', 'counted by', ''],
    style: { head: [], border: [], compact: true },
  });
  for (const e of r.events)
    table.push([
      e.eventTime,
      terminalSafe(e.eventId),
      e.status,
      { hAlign: 'right', content: e.amount },
      e.currency,
      terminalSafe(e.batchId),
      e.current ? '◀ state' : '',
    ]);
  const lines = [
    `order ${terminalSafe(r.orderId)} of customer ${terminalSafe(r.customerId)}: ${r.status}, ${r.amount} ${r.currency} at ${r.eventTime} (event ${terminalSafe(r.eventId ?? 'unknown')})`,
    `${counted(r.events.length, 'event')} counted, oldest first: newest wins, so the state holds the last`,
    table.toString(),
  ];
  for (const u of r.unread)
    lines.push(
      `${counted(u.claims, 'more event')} counted by batch ${terminalSafe(u.batchId)}, not shown: ${terminalSafe(u.reason)}`,
    );
  // Its claim removed a day after its batch's ledger entry expired, or its batch's archive unread.
  if (r.eventId !== undefined && !r.events.some((e) => e.current))
    lines.push(`the state's event ${terminalSafe(r.eventId)} is not among those shown`);
  return lines.join('\n');
};
