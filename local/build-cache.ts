/**
 * Where the local runtime keeps what it builds once and reuses across runs (the DynamoDB Local
 * loopback launcher, the environments' worker script), each under a name carrying its content's
 * hash: the project's `node_modules/.cache/onceflow`.
 */
import { join } from 'node:path';

export const BUILD_CACHE = join(import.meta.dirname, '..', 'node_modules', '.cache', 'onceflow');

/** Errors of a cache that cannot be written (a read-only install, a full disk…). */
const UNWRITABLE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'ENOSPC']);

/** Whether an error means the cache cannot be written (the caller then does without it). */
export const isUnwritable = (error: unknown): boolean =>
  error instanceof Error && UNWRITABLE.has((error as NodeJS.ErrnoException).code ?? '');
