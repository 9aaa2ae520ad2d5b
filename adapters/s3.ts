/**
 * The S3 side: the raw archive (create-only), the quarantine, and hour objects published with
 * compare-and-swap on their ETag.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import * as v from 'valibot';
import { type HourAggregate, HourAggregateSchema } from '../shared/aggregate.ts';
import type { AggregateObjects, StoredObject } from '../shared/aggregator.ts';
import type { Quarantine, RawArchive, Reject } from '../shared/ingest.ts';
import { AGGREGATE_PREFIX, hourObjectKey, hourOfObjectKey, rejectKey } from '../shared/keys.ts';
import { isNotFound, isPreconditionLost } from './errors.ts';

const JSON_TYPE = 'application/json';

/** Parses a stored hour object; undefined when it is not a valid aggregate (it gets replaced). */
const parseAggregate = (text: string): HourAggregate | undefined => {
  try {
    const result = v.safeParse(HourAggregateSchema, JSON.parse(text));
    if (!result.success) return undefined;
    const { hour, events, byStatus, revision } = result.output;
    return { hour, events, byStatus, revision };
  } catch {
    return undefined;
  }
};

export class S3Store implements RawArchive, Quarantine, AggregateObjects {
  readonly #client: S3Client;
  readonly #bucket: string;

  constructor(client: S3Client, bucket: string) {
    this.#client = client;
    this.#bucket = bucket;
  }

  async putOnce(key: string, body: string): Promise<void> {
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
    } catch (error) {
      // 412: archived by an earlier attempt. 409: a twin is archiving the same key right now;
      // the redelivery that follows will see 412.
      if (!isPreconditionLost(error)) throw error;
    }
  }

  async put(reject: Reject): Promise<void> {
    const { source, sentAtMs, ...rest } = reject;
    await this.#client.send(
      new PutObjectCommand({
        Bucket: this.#bucket,
        Key: rejectKey(source, sentAtMs, reject.messageId),
        Body: JSON.stringify({ source, sentAt: new Date(sentAtMs).toISOString(), ...rest }),
        ContentType: JSON_TYPE,
      }),
    );
  }

  async get(hour: string): Promise<StoredObject | undefined> {
    try {
      const out = await this.#client.send(
        new GetObjectCommand({ Bucket: this.#bucket, Key: hourObjectKey(hour) }),
      );
      if (!out.ETag || !out.Body)
        throw new TypeError(`hour object ${hour} came back without ETag or body`);
      return { etag: out.ETag, aggregate: parseAggregate(await out.Body.transformToString()) };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async putIfUnchanged(
    hour: string,
    body: HourAggregate & { computedAt: string },
    etag: string | undefined,
  ): Promise<boolean> {
    try {
      await this.#client.send(
        new PutObjectCommand({
          Bucket: this.#bucket,
          Key: hourObjectKey(hour),
          Body: JSON.stringify(body),
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

  /** Every key under a prefix, sorted. */
  async listKeys(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.#client.send(
        new ListObjectsV2Command({
          Bucket: this.#bucket,
          Prefix: prefix,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      keys.push(...(page.Contents ?? []).flatMap((c) => (c.Key ? [c.Key] : [])));
      token = page.NextContinuationToken;
    } while (token);
    return keys.sort();
  }

  /** The published hour objects (those that hold a valid aggregate), sorted by hour. */
  async listAggregates(): Promise<HourAggregate[]> {
    const hours = (await this.listKeys(AGGREGATE_PREFIX)).flatMap((key) => {
      const hour = hourOfObjectKey(key);
      return hour ? [hour] : [];
    });
    const stored = await Promise.all(hours.map((hour) => this.get(hour)));
    return stored.flatMap((s) => (s?.aggregate ? [s.aggregate] : []));
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
