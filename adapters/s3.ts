/**
 * The S3 side: the raw archive (create-only), the quarantine, and hour objects published with
 * compare-and-swap on their ETag.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import * as v from 'valibot';
import { type HourAggregate, HourAggregateSchema } from '../shared/aggregate.ts';
import type { AggregateObjects, HourObjectBody, StoredObject } from '../shared/aggregator.ts';
import { mapLimit } from '../shared/concurrency.ts';
import { type DayIndex, type DayIndexObjects, DayIndexSchema } from '../shared/day-index.ts';
import { RetryableError } from '../shared/errors.ts';
import type { Quarantine, RawArchive, Reject } from '../shared/ingest.ts';
import {
  AGGREGATE_PREFIX,
  arrivalKey,
  dayIndexKey,
  FINAL_INDEX_PREFIX,
  hourObjectKey,
  hourOfArchiveKey,
  hourOfObjectKey,
  RAW_PREFIX,
  rejectKey,
} from '../shared/keys.ts';
import type { HourLifecycle } from '../shared/lifecycle.ts';
import { sleep } from './backoff.ts';
import {
  isConditionalConflict,
  isNotFound,
  isPreconditionFailed,
  isPreconditionLost,
} from './errors.ts';

const JSON_TYPE = 'application/json';

/**
 * Objects read at once when listing them all (rejects, hour objects, day indexes). All at once,
 * a quarantine of 10,000 queued thousands of requests behind the SDK's 50 sockets, and the SDK
 * printed its socket-capacity warning on the operator's terminal.
 */
export const READS_IN_FLIGHT = 32;

/**
 * Parses a stored hour object; no aggregate when it is not a valid one (it gets replaced), and
 * its lifecycle fields as they are.
 */
const parseHourObject = (text: string): Omit<StoredObject, 'etag'> => {
  try {
    const result = v.safeParse(HourAggregateSchema, JSON.parse(text));
    if (!result.success) return { aggregate: undefined, lifecycle: {} };
    const { hour, events, byStatus, revision, final, finalizedAt, amendments, amendedAt } =
      result.output;
    return {
      aggregate: { hour, events, byStatus, revision },
      lifecycle: {
        ...(final ? { final } : {}),
        ...(finalizedAt === undefined ? {} : { finalizedAt }),
        ...(amendments === undefined ? {} : { amendments }),
        ...(amendedAt === undefined ? {} : { amendedAt }),
      },
    };
  } catch {
    return { aggregate: undefined, lifecycle: {} };
  }
};

export interface S3StoreOptions {
  /** Create-only writes answered 409 are tried this many times in all. Default 4. */
  readonly conflictAttempts?: number;
  /** Backoff before the second attempt, doubled for each further one. Default 100 ms. */
  readonly conflictBackoffMs?: number;
}

export class S3Store implements RawArchive, Quarantine, AggregateObjects, DayIndexObjects {
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #conflictAttempts: number;
  readonly #conflictBackoffMs: number;

  constructor(client: S3Client, bucket: string, options: S3StoreOptions = {}) {
    this.#client = client;
    this.#bucket = bucket;
    this.#conflictAttempts = options.conflictAttempts ?? 4;
    this.#conflictBackoffMs = options.conflictBackoffMs ?? 100;
  }

  /**
   * Creates the object unless it exists. Only a 412 means "already there" (an earlier attempt
   * archived it). A 409 means another create of the same key is in flight and may never
   * finish (its invocation may time out): it is retried with backoff and, if it persists, the
   * message fails and comes back, so no batch commits without its archive.
   */
  async putOnce(key: string, body: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#client.send(
          new PutObjectCommand({
            Bucket: this.#bucket,
            Key: key,
            Body: body,
            ContentType: JSON_TYPE,
            IfNoneMatch: '*',
          }),
        );
        return;
      } catch (error) {
        if (isPreconditionFailed(error)) return;
        if (!isConditionalConflict(error)) throw error;
        if (attempt >= this.#conflictAttempts) {
          throw new RetryableError(
            `${key}: S3 answered 409 ConditionalRequestConflict ${attempt} times; the archive is not written yet`,
            { cause: error },
          );
        }
        await sleep(this.#conflictBackoffMs * 2 ** (attempt - 1));
      }
    }
  }

  /** A marker: its key names the hour and the archive key (see `arrivalKey`). */
  async recordArrival(receivedAtMs: number, archiveKey: string): Promise<void> {
    await this.#client.send(
      new PutObjectCommand({
        Bucket: this.#bucket,
        Key: arrivalKey(receivedAtMs, archiveKey),
        Body: JSON.stringify({ receivedAt: new Date(receivedAtMs).toISOString(), archiveKey }),
        ContentType: JSON_TYPE,
      }),
    );
  }

  async put(reject: Reject): Promise<void> {
    const { source, sentAtMs, id, ...rest } = reject;
    await this.#client.send(
      new PutObjectCommand({
        Bucket: this.#bucket,
        Key: rejectKey(source, reject.reason, sentAtMs, id ?? reject.messageId),
        Body: JSON.stringify({ source, sentAt: new Date(sentAtMs).toISOString(), ...rest }),
        ContentType: JSON_TYPE,
      }),
    );
  }

  async get(hour: string): Promise<StoredObject | undefined> {
    const stored = await this.#getVersioned(hourObjectKey(hour), `hour object ${hour}`);
    return stored && { etag: stored.etag, ...parseHourObject(stored.text) };
  }

  /**
   * An object's text with the ETag a compare-and-swap write names; undefined when there is none.
   * `what` names the object in the error when S3 answers without either.
   */
  async #getVersioned(
    key: string,
    what: string,
  ): Promise<{ etag: string; text: string } | undefined> {
    try {
      const out = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: key }));
      if (!out.ETag || !out.Body) throw new TypeError(`${what} came back without ETag or body`);
      return { etag: out.ETag, text: await out.Body.transformToString() };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async putIfUnchanged(
    hour: string,
    body: HourObjectBody,
    etag: string | undefined,
  ): Promise<boolean> {
    return this.#putIfMatch(hourObjectKey(hour), JSON.stringify(body), etag);
  }

  /**
   * A compare-and-swap write: if the object still has `etag` (or, with undefined, still does not
   * exist). False when another writer got there first.
   */
  async #putIfMatch(key: string, body: string, etag: string | undefined): Promise<boolean> {
    try {
      await this.#client.send(
        new PutObjectCommand({
          Bucket: this.#bucket,
          Key: key,
          Body: body,
          ContentType: JSON_TYPE,
          ...(etag === undefined ? { IfNoneMatch: '*' } : { IfMatch: etag }),
        }),
      );
      return true;
    } catch (error) {
      // 404 answers If-Match when the object was deleted meanwhile: lost the race as well.
      if (isPreconditionLost(error) || isNotFound(error)) return false;
      throw error;
    }
  }

  /** An object's content as text (raw batches, rejects); undefined when there is none. */
  async getText(key: string): Promise<string | undefined> {
    try {
      const out = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: key }));
      return await out.Body?.transformToString();
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Whether an object exists, read without its content. */
  async exists(key: string): Promise<boolean> {
    try {
      await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: key }));
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  /** Every key under a prefix (after `startAfter`, if given), sorted. */
  async listKeys(prefix: string, startAfter?: string): Promise<string[]> {
    return (await this.#listObjects(prefix, startAfter)).map((o) => o.key);
  }

  /** Every page of a listing, following its continuation tokens. */
  async *#pages(input: { Prefix: string; StartAfter?: string; Delimiter?: string }) {
    let token: string | undefined;
    do {
      const page = await this.#client.send(
        new ListObjectsV2Command({
          Bucket: this.#bucket,
          ...input,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      yield page;
      token = page.NextContinuationToken;
    } while (token);
  }

  /** Every object under a prefix with its ETag, sorted by key. */
  async #listObjects(
    prefix: string,
    startAfter?: string,
  ): Promise<{ key: string; etag: string }[]> {
    const objects: { key: string; etag: string }[] = [];
    for await (const page of this.#pages({
      Prefix: prefix,
      ...(startAfter ? { StartAfter: startAfter } : {}),
    }))
      for (const c of page.Contents ?? [])
        if (c.Key) objects.push({ key: c.Key, etag: c.ETag ?? '' });
    return objects.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** The folders right under a prefix (`rejects/ingest/`, …): one listing by delimiter. */
  async subfolders(prefix: string): Promise<string[]> {
    const folders: string[] = [];
    for await (const page of this.#pages({ Prefix: prefix, Delimiter: '/' }))
      for (const p of page.CommonPrefixes ?? []) if (p.Prefix) folders.push(p.Prefix);
    return folders.sort();
  }

  /**
   * The hours that have an object, each with its ETag, sorted by hour: one listing, no reads
   * (a reader that keeps the ETags it read fetches only the objects that changed since).
   */
  async listHourEtags(): Promise<{ hour: string; etag: string }[]> {
    return (await this.#listObjects(AGGREGATE_PREFIX)).flatMap(({ key, etag }) => {
      const hour = hourOfObjectKey(key);
      return hour ? [{ hour, etag }] : [];
    });
  }

  /** The published hour objects (those that hold a valid aggregate), sorted by hour. */
  async listAggregates(): Promise<HourAggregate[]> {
    return (await this.listHourObjects()).map((o) => o.aggregate);
  }

  /** The published hour objects with their lifecycle, sorted by hour. */
  async listHourObjects(): Promise<{ aggregate: HourAggregate; lifecycle: HourLifecycle }[]> {
    const hours = await this.listHourEtags();
    const stored = await mapLimit(hours, READS_IN_FLIGHT, ({ hour }) => this.get(hour));
    return stored.flatMap((s) =>
      s?.aggregate ? [{ aggregate: s.aggregate, lifecycle: s.lifecycle }] : [],
    );
  }

  /** The day indexes of final hours, sorted by date (those that hold a valid index). */
  async listDayIndexes(): Promise<DayIndex[]> {
    const dates = (await this.listKeys(FINAL_INDEX_PREFIX)).flatMap((key) => {
      const m = /date=(\d{4}-\d{2}-\d{2})\.json$/.exec(key);
      return m?.[1] ? [m[1]] : [];
    });
    const stored = await mapLimit(dates, READS_IN_FLIGHT, (date) => this.getDayIndex(date));
    return stored.flatMap((s) => (s?.index ? [s.index] : []));
  }

  async getDayIndex(
    date: string,
  ): Promise<{ etag: string; index: DayIndex | undefined } | undefined> {
    const stored = await this.#getVersioned(dayIndexKey(date), `day index ${date}`);
    if (!stored) return undefined;
    let index: DayIndex | undefined;
    try {
      const result = v.safeParse(DayIndexSchema, JSON.parse(stored.text));
      index = result.success ? result.output : undefined;
    } catch {
      index = undefined;
    }
    return { etag: stored.etag, index };
  }

  async putDayIndexIfUnchanged(
    date: string,
    index: DayIndex,
    etag: string | undefined,
  ): Promise<boolean> {
    return this.#putIfMatch(dayIndexKey(date), JSON.stringify(index), etag);
  }

  /** The earliest hour a raw batch is filed under (keys sort by date and hour). */
  async earliestArchivedHour(): Promise<string | undefined> {
    const page = await this.#client.send(
      new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: RAW_PREFIX, MaxKeys: 1 }),
    );
    const key = page.Contents?.[0]?.Key;
    return key === undefined ? undefined : hourOfArchiveKey(key);
  }

  async deleteIfUnchanged(hour: string, etag: string): Promise<boolean> {
    try {
      await this.#client.send(
        new DeleteObjectCommand({ Bucket: this.#bucket, Key: hourObjectKey(hour), IfMatch: etag }),
      );
      return true;
    } catch (error) {
      if (isNotFound(error)) return true;
      if (isPreconditionLost(error)) return false;
      throw error;
    }
  }
}
