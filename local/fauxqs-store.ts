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
  /** Closes the SQLite store (after the server stopped). */
  close(): void;
}

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
    const sqs = stores.sqsStore as unknown as { processAllTimers?: () => void };
    const expireVisibility = () => sqs.processAllTimers?.();
    if (dataDir === undefined) return { stores, expireVisibility, close: () => {} };
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
    return { stores, expireVisibility, close: () => persistence.close() };
  } catch (error) {
    throw new FauxqsPersistenceError(
      `this fauxqs version's stores cannot be set up${dataDir ? ` to keep their state in ${dataDir}` : ''}: ${(error as Error).message}`,
      { cause: error },
    );
  }
};
