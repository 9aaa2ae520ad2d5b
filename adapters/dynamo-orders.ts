/**
 * Order items: each order's newest-wins state and the claims on its events, in one item, so one
 * conditional write per (batch, order) settles both atomically.
 *
 *   pk ORDER#<orderId>, sk STATE, kind order
 *   state         customerId, status, amount, currency, eventTime, eventId, t (canonical
 *                 instant), batchId (the batch whose event it is)
 *   c:<key>       one attribute per claimed event: "<event digest>:<expiresAt or ->:<batchId>"
 *
 * The claim key is 16 characters of the event id's SHA-256, whatever the id's length. Claims are
 * top-level attributes, so a write names only its own: its condition is that its claims do not
 * exist yet and, when it sets the state, that the stored state is older. Two batches settling
 * different events of one order never conflict; the loser of a real race gets the current item
 * back with the failure and settles again. A batch's claims are removed by the first write after
 * its ledger entry expired (plus a day for clocks): by then every batch holding those events is
 * refused as beyond the retention, so no event can count twice.
 */
import { createHash } from 'node:crypto';
import {
  type AttributeValue,
  ConditionalCheckFailedException,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import type { ClaimReader } from '../shared/batch-report.ts';
import { type EventClaim, type Settlement, settleOrder } from '../shared/claims.ts';
import { KeyedQueue, mapLimit } from '../shared/concurrency.ts';
import { eventDigest } from '../shared/digest.ts';
import { OrderTooLargeError, RetryableError } from '../shared/errors.ts';
import type { Claimant, OrderStore } from '../shared/ingest.ts';
import type { OrderView } from '../shared/order-state.ts';
import type { OrderEvent } from '../shared/schema.ts';
import {
  batchGet,
  getItem,
  type Item,
  itemBytes,
  keyOf,
  ORDER_PK_PREFIX,
  orderKey,
  readString,
  S,
} from './dynamo-items.ts';
import { DynamoOrderReader, toOrderView } from './dynamo-order-reader.ts';

/** DynamoDB's item limit, less a margin. */
export const MAX_ORDER_ITEM_BYTES = 400 * 1024 - 1024;
/**
 * Claims per write: each adds a condition and an assignment, and an expression holds 4 KB. An
 * order with more events in one batch is settled in several writes, each atomic on its own.
 */
export const MAX_CLAIMS_PER_WRITE = 50;
/** Expired claims one write removes. */
export const MAX_REMOVALS_PER_WRITE = 100;
/** Claims outlive their batch's ledger entry by this much, for clock differences. */
const CLAIM_GRACE_MS = 24 * 3600 * 1000;
/** Writes lost to a concurrent writer of the same order before the message is retried. */
const MAX_ATTEMPTS = 10;
const CLAIM_PREFIX = 'c:';

/**
 * Whether a DynamoDB request (its input) reads order items, as a settle's read of its orders
 * does. For fault injection that must hit that read only.
 */
export const readsOrders = (input: unknown): boolean =>
  JSON.stringify(input).includes(`"S":"${ORDER_PK_PREFIX}`);

/** The attribute holding the claim on an event: fixed-size, whatever the event id. */
export const claimAttribute = (eventId: string) =>
  `${CLAIM_PREFIX}${createHash('sha256').update(eventId).digest('base64url').slice(0, 16)}`;

interface StoredClaim extends EventClaim {
  /** When the claiming batch's ledger entry expires (epoch seconds); undefined: never. */
  readonly expiresAt: number | undefined;
}

const readClaim = (value: AttributeValue): StoredClaim => {
  const text = value.S ?? '';
  const first = text.indexOf(':');
  const second = text.indexOf(':', first + 1);
  const expires = text.slice(first + 1, second);
  return {
    digest: text.slice(0, first),
    expiresAt: expires === '-' ? undefined : Number(expires),
    batchId: text.slice(second + 1),
  };
};

const claimValue = (event: OrderEvent, claimant: Claimant) =>
  S(`${eventDigest(event)}:${claimant.expiresAtSeconds ?? '-'}:${claimant.batchId}`);

const snapshotOf = (item: Item | undefined) => {
  const t = item?.t?.S;
  const eventId = item?.eventId?.S;
  return {
    newest: t !== undefined && eventId !== undefined ? { instant: t, eventId } : undefined,
    claimOf: (id: string): EventClaim | undefined => {
      const value = item?.[claimAttribute(id)];
      return value ? readClaim(value) : undefined;
    },
  };
};

/**
 * Claims whose batch's ledger entry expired (plus the grace): the write removes them, at most
 * MAX_REMOVALS_PER_WRITE at a time (the expression holds 4 KB); later writes remove the rest.
 */
const expiredClaims = (item: Item | undefined, nowMs: number): string[] =>
  Object.entries(item ?? {})
    .flatMap(([name, value]) => {
      if (!name.startsWith(CLAIM_PREFIX)) return [];
      const { expiresAt } = readClaim(value);
      return expiresAt !== undefined && expiresAt * 1000 + CLAIM_GRACE_MS < nowMs ? [name] : [];
    })
    .slice(0, MAX_REMOVALS_PER_WRITE);

/** The attributes a settlement sets: its new claims, and the state when it has a newer one. */
const settledAttributes = (settlement: Settlement, claimant: Claimant): Item => {
  const item: Item = {};
  for (const event of settlement.newClaims)
    item[claimAttribute(event.eventId)] = claimValue(event, claimant);
  const state = settlement.newState;
  if (state) {
    Object.assign(item, {
      customerId: S(state.customerId),
      status: S(state.status),
      amount: S(state.amount),
      currency: S(state.currency),
      eventTime: S(state.eventTime),
      eventId: S(state.eventId),
      t: S(state.instant),
      batchId: S(claimant.batchId),
    });
  }
  return item;
};

/**
 * The write that records a settlement: its claims (each on condition that it does not exist),
 * the new state (on condition that the stored one is older), expired claims removed. Pure, so
 * its expressions can be checked against DynamoDB's limits without a table.
 */
export const orderWriteRequest = (
  table: string,
  orderId: string,
  settlement: Settlement,
  claimant: Claimant,
  expired: readonly string[] = [],
): UpdateItemCommandInput => {
  const names: Record<string, string> = {};
  const values: Item = { ':kind': S('order'), ':orderId': S(orderId) };
  const sets = ['kind = :kind', 'orderId = :orderId'];
  const conditions: string[] = [];
  for (const [i, [name, value]] of Object.entries(
    settledAttributes(settlement, claimant),
  ).entries()) {
    names[`#a${i}`] = name;
    values[`:a${i}`] = value;
    sets.push(`#a${i} = :a${i}`);
    if (name.startsWith(CLAIM_PREFIX)) conditions.push(`attribute_not_exists(#a${i})`);
  }
  if (settlement.newState) {
    // Newest wins on (event time, event id), compared as settleOrder and the model compare.
    names['#t'] = 't';
    names['#eid'] = 'eventId';
    conditions.push('(attribute_not_exists(#t) OR #t < :t OR (#t = :t AND #eid < :eid))');
    values[':t'] = S(settlement.newState.instant);
    values[':eid'] = S(settlement.newState.eventId);
  }
  expired.forEach((name, i) => {
    names[`#x${i}`] = name;
  });
  const remove = expired.map((_, i) => `#x${i}`);
  return {
    TableName: table,
    Key: keyOf(orderKey(orderId)),
    UpdateExpression: `SET ${sets.join(', ')}${remove.length ? ` REMOVE ${remove.join(', ')}` : ''}`,
    ...(conditions.length ? { ConditionExpression: conditions.join(' AND ') } : {}),
    ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
    ExpressionAttributeValues: values,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
};

/** An order's item after its first settlement (for size checks): key, kind, state and claims. */
export const firstOrderItem = (events: readonly OrderEvent[], claimant: Claimant): Item => {
  const orderId = events[0]?.orderId ?? '';
  const settlement = settleOrder(snapshotOf(undefined), claimant.batchId, events);
  return {
    ...keyOf(orderKey(orderId)),
    kind: S('order'),
    orderId: S(orderId),
    ...settledAttributes(settlement, claimant),
  };
};

const merge = (settlements: readonly Settlement[]): Settlement => ({
  ours: settlements.flatMap((s) => s.ours),
  newClaims: settlements.flatMap((s) => s.newClaims),
  duplicates: settlements.flatMap((s) => s.duplicates),
  conflicts: settlements.flatMap((s) => s.conflicts),
  newState: settlements.reduce<OrderEvent | undefined>((n, s) => s.newState ?? n, undefined),
});

/** Settling orders (see the module comment); reading them is `DynamoOrderReader`'s. */
export class DynamoOrderStore extends DynamoOrderReader implements OrderStore {
  /**
   * Settles of one order in this process (records of one invocation run in parallel) go one
   * after the other: run together they would only fail each other's conditions and pay for it.
   */
  readonly #perOrder = new KeyedQueue();

  /**
   * Orders this process wrote, with the sequence number of the last write, kept while a read
   * made before it may still be used (see `settle`).
   */
  readonly #lastWrite = new Map<string, number>();
  #writes = 0;
  /** The write count when each `settle` in flight read its orders. */
  readonly #readsInFlight = new Set<{ readonly at: number }>();

  /**
   * Settles each order's events of a batch and writes the result, one conditional write per
   * order (see `orderWriteRequest`), at most `concurrency` orders at a time. The orders are read
   * up front, strongly consistent, in one BatchGetItem per 100 (billed as the same reads one
   * GetItem each would be, in one round trip instead of one per order). A read this process has
   * since overtaken with a write of its own (another record of the invocation settling the same
   * order) is read again rather than lose the condition; one overtaken elsewhere loses the
   * condition, and the failure returns the current item (no extra read) to settle again from.
   * Nothing to change, no write: a redelivery that finds its claims in place only reads. The
   * read does not wait for `ready`; the writes do.
   */
  async settle(
    orders: readonly (readonly OrderEvent[])[],
    claimant: Claimant,
    concurrency: number,
    ready?: Promise<unknown>,
  ): Promise<Settlement[]> {
    const ids = orders.map((events) => {
      const orderId = events[0]?.orderId;
      if (orderId === undefined) throw new RangeError('settle needs at least one event per order');
      return orderId;
    });
    const read = { at: this.#writes };
    this.#readsInFlight.add(read);
    try {
      const items = new Map(
        (
          await batchGet(
            this.client,
            this.table,
            ids.map((id) => keyOf(orderKey(id))),
          )
        ).map((item) => [readString(item, 'orderId'), item]),
      );
      await ready;
      return await mapLimit(orders, concurrency, (events) => {
        const orderId = events[0]?.orderId ?? '';
        return this.#perOrder.run(orderId, async () => {
          const overtaken = (this.#lastWrite.get(orderId) ?? -1) >= read.at;
          const item = overtaken
            ? await getItem(this.client, this.table, orderKey(orderId))
            : items.get(orderId);
          return this.#settle(orderId, events, claimant, item);
        });
      });
    } finally {
      this.#readsInFlight.delete(read);
      this.#forgetWrites();
    }
  }

  /**
   * The claims on these orders' events as stored now, read strongly consistent in one
   * BatchGetItem per 100 orders: which batch counts each event (`onceflow batch`).
   */
  async claimReader(orderIds: readonly string[]): Promise<ClaimReader> {
    const items = await batchGet(
      this.client,
      this.table,
      [...new Set(orderIds)].map((id) => keyOf(orderKey(id))),
    );
    const byOrder = new Map(items.map((item) => [readString(item, 'orderId'), item]));
    return (orderId, eventId) => snapshotOf(byOrder.get(orderId)).claimOf(eventId);
  }

  /**
   * One order as stored now (strongly consistent): its state, the event the state holds and
   * every claim on its events (`onceflow orders --events`); undefined for an unknown order.
   */
  async orderClaims(orderId: string): Promise<
    | {
        readonly order: OrderView;
        readonly stateEventId: string | undefined;
        readonly claims: readonly EventClaim[];
        readonly claimOf: (eventId: string) => EventClaim | undefined;
      }
    | undefined
  > {
    const item = await getItem(this.client, this.table, orderKey(orderId));
    if (!item) return undefined;
    return {
      order: toOrderView(item),
      stateEventId: item.eventId?.S,
      claims: Object.entries(item).flatMap(([name, value]) =>
        name.startsWith(CLAIM_PREFIX) ? [readClaim(value)] : [],
      ),
      claimOf: snapshotOf(item).claimOf,
    };
  }

  /** Drops the writes no read in flight can have missed, so the map stays small. */
  #forgetWrites() {
    let oldest = Number.POSITIVE_INFINITY;
    for (const read of this.#readsInFlight) oldest = Math.min(oldest, read.at);
    if (oldest === Number.POSITIVE_INFINITY) this.#lastWrite.clear();
    else for (const [id, at] of this.#lastWrite) if (at < oldest) this.#lastWrite.delete(id);
  }

  async #settle(
    orderId: string,
    events: readonly OrderEvent[],
    claimant: Claimant,
    read: Item | undefined,
  ): Promise<Settlement> {
    let item = read;
    const settled: Settlement[] = [];
    for (let i = 0; i < events.length; i += MAX_CLAIMS_PER_WRITE) {
      const chunk = events.slice(i, i + MAX_CLAIMS_PER_WRITE);
      const result = await this.#settleChunk(orderId, chunk, claimant, item);
      settled.push(result.settlement);
      item = result.item;
    }
    return merge(settled);
  }

  async #settleChunk(
    orderId: string,
    events: readonly OrderEvent[],
    claimant: Claimant,
    read: Item | undefined,
  ): Promise<{ settlement: Settlement; item: Item | undefined }> {
    let item = read;
    for (let attempt = 1; ; attempt++) {
      const settlement = settleOrder(snapshotOf(item), claimant.batchId, events);
      if (settlement.newClaims.length === 0 && !settlement.newState) return { settlement, item };
      const expired = expiredClaims(item, claimant.nowMs);
      const request = orderWriteRequest(this.table, orderId, settlement, claimant, expired);
      const bytes = itemBytes(item) + itemBytes(firstOrderItem(settlement.newClaims, claimant));
      if (bytes > MAX_ORDER_ITEM_BYTES) throw new OrderTooLargeError(orderId, bytes);
      try {
        const out = await this.client.send(
          new UpdateItemCommand({ ...request, ReturnValues: 'ALL_NEW' }),
        );
        this.#lastWrite.set(orderId, this.#writes++);
        return { settlement, item: out.Attributes };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        if (attempt >= MAX_ATTEMPTS) {
          throw new RetryableError(
            `order ${orderId}: ${attempt} writes lost to concurrent writers; the message will be retried`,
            { cause: error },
          );
        }
        item = error.Item;
      }
    }
  }
}
