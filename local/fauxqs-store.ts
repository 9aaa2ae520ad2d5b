/**
 * fauxqs's stores, made here for two settings `buildApp` does not offer:
 * - queue URLs that name the address the caller used (`http://127.0.0.1:<port>/<account>/<name>`)
 *   instead of `sqs.<region>.localhost`, which does not resolve on every machine: clients that
 *   send to the queue URL itself (SDK for JavaScript v2, Java v1) need it to resolve;
 * - state kept in SQLite in a directory. fauxqs persists only through `startFauxqs`, which
 *   listens on every interface; the edge needs it on loopback behind `buildApp`, which takes
 *   ready-made stores. So this wires them as `startFauxqs` does (load the saved state first,
 *   then attach the store to every queue).
 * It reaches fauxqs's store modules by fauxqs's own module URL (`fauxqs-modules.ts`), so the
 * classes are the ones `buildApp` uses.
 */
import type { buildApp } from 'fauxqs';
import { fauxqsModule } from './fauxqs-modules.ts';

type Stores = NonNullable<NonNullable<Parameters<typeof buildApp>[0]>['stores']>;

interface Persistence {
  load(sqs: unknown, sns: unknown, s3: unknown): void;
  close(): void;
}

/** The installed fauxqs's stores cannot be made here (its module layout is not the expected one). */
export class FauxqsPersistenceError extends Error {
  override readonly name = 'FauxqsPersistenceError';
}

export interface FauxqsStores {
  readonly stores: Stores;
  /** Returns every in-flight message whose visibility timeout ended to its queue, as SQS does. */
  expireVisibility(): void;
  /**
   * The age of the queue's oldest message not deleted (waiting or in flight), in ms; 0 when it
   * has none; undefined when there is no such queue. What SQS's `ApproximateAgeOfOldestMessage`
   * measures.
   */
  oldestMessageAgeMs(queueName: string, nowMs: number): number | undefined;
  /** Closes the SQLite store (after the server stopped). */
  close(): void;
}

/** A fauxqs message's send time, when the value is one. */
const sentOf = (message: unknown): number[] =>
  typeof message === 'object' &&
  message !== null &&
  'sentTimestamp' in message &&
  typeof message.sentTimestamp === 'number'
    ? [message.sentTimestamp]
    : [];

/** The oldest send time among a fauxqs queue's messages, waiting (FIFO groups too) or in flight. */
const oldestSent = (queue: unknown): number | undefined => {
  if (typeof queue !== 'object' || queue === null) return undefined;
  const field = (name: string): unknown => (name in queue ? Reflect.get(queue, name) : undefined);
  const list = (value: unknown): unknown[] =>
    Array.isArray(value) ? value : value instanceof Map ? [...value.values()] : [];
  const times = [
    ...list(field('messages')).flatMap(sentOf),
    ...list(field('inflightMessages')).flatMap((entry) =>
      typeof entry === 'object' && entry !== null && 'message' in entry
        ? sentOf(entry.message)
        : [],
    ),
    ...list(field('fifoMessages')).flatMap((group) => list(group).flatMap(sentOf)),
  ];
  // Not Math.min(...times): a backlog of a few hundred thousand would overflow the stack.
  return times.reduce<number | undefined>((a, b) => (a === undefined || b < a ? b : a), undefined);
};

/**
 * fauxqs's stores, with queue URLs on the caller's address, and (with `dataDir`) their state
 * loaded from, and written through to, that directory.
 */
export const fauxqsStores = async (dataDir?: string): Promise<FauxqsStores> => {
  try {
    const { SqsStore } = await fauxqsModule<{ SqsStore: new () => Stores['sqsStore'] }>(
      './dist/sqs/sqsStore.js',
    );
    const { SnsStore } = await fauxqsModule<{ SnsStore: new () => Stores['snsStore'] }>(
      './dist/sns/snsStore.js',
    );
    const { S3Store } = await fauxqsModule<{ S3Store: new () => Stores['s3Store'] }>(
      './dist/s3/s3Store.js',
    );
    const { PersistenceManager } = await fauxqsModule<{
      PersistenceManager: new (dir: string) => Persistence;
    }>('./dist/persistence.js');
    const stores = { sqsStore: new SqsStore(), snsStore: new SnsStore(), s3Store: new S3Store() };
    // An empty host: fauxqs then builds queue URLs from the request's Host header.
    (stores.sqsStore as unknown as { host: string }).host = '';
    const sqs = stores.sqsStore as unknown as {
      processAllTimers?: () => void;
      getQueueByName?: (name: string) => unknown;
    };
    const expireVisibility = () => sqs.processAllTimers?.();
    const oldestMessageAgeMs = (queueName: string, nowMs: number) => {
      const queue = sqs.getQueueByName?.(queueName);
      if (queue === undefined) return undefined;
      const oldest = oldestSent(queue);
      return oldest === undefined ? 0 : Math.max(0, nowMs - oldest);
    };
    const shared = { stores, expireVisibility, oldestMessageAgeMs };
    if (dataDir === undefined) return { ...shared, close: () => {} };
    const persistence = new PersistenceManager(dataDir);
    // Load before attaching, as fauxqs does: loading through an attached store would rewrite
    // (and cascade-delete) what it reads.
    persistence.load(stores.sqsStore, stores.snsStore, stores.s3Store);
    const attach = (target: unknown) => {
      (target as { persistence: Persistence }).persistence = persistence;
    };
    attach(stores.sqsStore);
    attach(stores.snsStore);
    attach(stores.s3Store);
    for (const queue of (stores.sqsStore as unknown as { allQueues(): unknown[] }).allQueues())
      attach(queue);
    return { ...shared, close: () => persistence.close() };
  } catch (error) {
    throw new FauxqsPersistenceError(
      `this fauxqs version's stores cannot be set up${dataDir ? ` to keep their state in ${dataDir}` : ''}: ${(error as Error).message}`,
      { cause: error },
    );
  }
};
