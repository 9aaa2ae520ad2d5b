/**
 * The DynamoDB side of finished hours: the watermark's item and the finalizer's marks and cursor
 * (the item layout is in dynamo-items.ts).
 */
import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { RetryableError } from '../shared/errors.ts';
import type { FinalMarks } from '../shared/finalizer.ts';
import type { FinalMark } from '../shared/lifecycle.ts';
import { type EventClock, watermarkStepOf } from '../shared/watermark.ts';
import {
  batchGet,
  finalizerCursorKey,
  finalMarkKey,
  getItem,
  HOUR_PK_PREFIX,
  keyOf,
  N,
  S,
  toFinalMark,
  WATERMARK_ATTRIBUTE,
  watermarkKey,
} from './dynamo-items.ts';

/**
 * The finalizer's marks (one item in each final hour's partition) and its cursor. Marking is
 * create-only, so concurrent finalizers agree on when an hour became final.
 */
export class DynamoFinalMarks implements FinalMarks {
  readonly #client: DynamoDBClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, table: string) {
    this.#client = client;
    this.#table = table;
  }

  async close(hour: string, nowMs: number): Promise<FinalMark> {
    try {
      await this.#client.send(
        new PutItemCommand({
          TableName: this.#table,
          Item: { ...keyOf(finalMarkKey(hour)), closedAt: N(nowMs) },
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { closedAtMs: nowMs };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      return this.#existing(hour, error);
    }
  }

  async confirm(hour: string, nowMs: number): Promise<FinalMark> {
    try {
      const result = await this.#client.send(
        new UpdateItemCommand({
          TableName: this.#table,
          Key: keyOf(finalMarkKey(hour)),
          UpdateExpression: 'SET finalizedAt = :t',
          // Only a closed hour becomes final, once: concurrent finalizers agree on when.
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(finalizedAt)',
          ExpressionAttributeValues: { ':t': N(nowMs) },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      if (!result.Attributes) throw new RetryableError(`hour ${hour}: final mark not returned`);
      return toFinalMark(result.Attributes);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const mark = await this.#existing(hour, error);
      if (mark.finalizedAtMs === undefined)
        throw new RetryableError(`hour ${hour}: confirmed before it was closed`, { cause: error });
      return mark;
    }
  }

  async #existing(hour: string, error: ConditionalCheckFailedException): Promise<FinalMark> {
    const existing = error.Item ?? (await getItem(this.#client, this.#table, finalMarkKey(hour)));
    if (!existing) throw new RetryableError(`hour ${hour}: final mark vanished`, { cause: error });
    return toFinalMark(existing);
  }

  async recordFinalRevision(hour: string, revision: number): Promise<void> {
    try {
      await this.#client.send(
        new UpdateItemCommand({
          TableName: this.#table,
          Key: keyOf(finalMarkKey(hour)),
          UpdateExpression: 'SET finalRevision = :r',
          // The first finalizer to publish decides: a later one must not rewrite what
          // consumers may have read.
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(finalRevision)',
          ExpressionAttributeValues: { ':r': N(revision) },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async marksOf(hours: readonly string[]): Promise<Map<string, FinalMark>> {
    const items = await batchGet(
      this.#client,
      this.#table,
      hours.map((hour) => keyOf(finalMarkKey(hour))),
    );
    return new Map(
      items.map((item) => [(item.pk?.S ?? '').slice(HOUR_PK_PREFIX.length), toFinalMark(item)]),
    );
  }

  async cursor(): Promise<string | undefined> {
    return (await getItem(this.#client, this.#table, finalizerCursorKey))?.nextHour?.S;
  }

  async advanceCursor(hour: string): Promise<void> {
    try {
      await this.#client.send(
        new UpdateItemCommand({
          TableName: this.#table,
          Key: keyOf(finalizerCursorKey),
          UpdateExpression: 'SET nextHour = :h',
          // Forward only (ISO hours sort as text): a slower concurrent run never moves it back.
          ConditionExpression: 'attribute_not_exists(nextHour) OR nextHour < :h',
          ExpressionAttributeValues: { ':h': S(hour) },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
}

/**
 * The latest applied event time in one item. Each instance (one per execution environment)
 * remembers the step it last saw stored and writes only for a later one, conditionally, so a
 * steady stream costs each environment one write per step (shared/watermark.ts).
 */
export class DynamoEventClock implements EventClock {
  readonly #client: DynamoDBClient;
  readonly #table: string;
  #known = Number.NEGATIVE_INFINITY;
  #inFlight: { readonly step: number; readonly done: Promise<void> } | undefined;

  constructor(client: DynamoDBClient, table: string) {
    this.#client = client;
    this.#table = table;
  }

  async advance(latestEventMs: number, receivedAtMs: number): Promise<void> {
    const step = watermarkStepOf(latestEventMs, receivedAtMs);
    if (step <= this.#known) return;
    // Records of one invocation run concurrently: one write per step, the others wait for it.
    const inFlight = this.#inFlight;
    if (inFlight && step <= inFlight.step) return inFlight.done;
    const done = this.#write(step);
    this.#inFlight = { step, done };
    try {
      await done;
    } finally {
      if (this.#inFlight?.done === done) this.#inFlight = undefined;
    }
  }

  async #write(step: number): Promise<void> {
    try {
      await this.#client.send(
        new UpdateItemCommand({
          TableName: this.#table,
          Key: keyOf(watermarkKey),
          UpdateExpression: 'SET #t = :t',
          ConditionExpression: 'attribute_not_exists(#t) OR #t < :t',
          ExpressionAttributeNames: { '#t': WATERMARK_ATTRIBUTE },
          ExpressionAttributeValues: { ':t': N(step) },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      this.#known = Math.max(this.#known, step);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // Another environment stored this step or a later one: remember what is there.
      const stored = error.Item?.[WATERMARK_ATTRIBUTE]?.N;
      this.#known = Math.max(this.#known, step, stored === undefined ? step : Number(stored));
    }
  }

  async latest(): Promise<number | undefined> {
    const value = (await getItem(this.#client, this.#table, watermarkKey))?.[WATERMARK_ATTRIBUTE]
      ?.N;
    return value === undefined ? undefined : Number(value);
  }
}
