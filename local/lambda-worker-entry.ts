/**
 * The script an environment's worker thread runs (`lambda-worker.ts`), as JavaScript. Run as
 * TypeScript, every environment would load Node's type stripper (a WebAssembly module) into its
 * own isolate before the bundle: 40 to 90 ms of CPU per cold start that Lambda's runtime does not
 * spend (an environment of an empty handler answered its first invocation in 127–152 ms with it,
 * 54–68 without). Built once per process with esbuild into the build cache, under a name that is
 * the hash of its content: processes share it, and a changed script is never served from an
 * older build. Where the cache cannot be written, the environments run the TypeScript as before.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { BUILD_CACHE, isUnwritable } from './build-cache.ts';

const SOURCE = join(import.meta.dirname, 'lambda-worker.ts');

let built: Promise<URL> | undefined;

/**
 * Builds the worker script into `cache` (or finds it there); the TypeScript source's URL when
 * the cache cannot be written.
 */
export const buildLambdaWorkerEntry = async (cache = BUILD_CACHE): Promise<URL> => {
  const result = await build({
    entryPoints: [SOURCE],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    write: false,
    logLevel: 'silent',
  });
  const text = result.outputFiles[0]?.text;
  if (text === undefined) throw new Error('esbuild wrote no lambda-worker script');
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 16);
  const file = join(cache, `lambda-worker-${hash}.mjs`);
  if (existsSync(file)) return pathToFileURL(file);
  // Written beside and renamed: a process starting a worker meanwhile sees all of it or none.
  const partial = `${file}.${process.pid}.partial`;
  try {
    mkdirSync(cache, { recursive: true });
    writeFileSync(partial, text);
    renameSync(partial, file);
  } catch (error) {
    if (isUnwritable(error)) return pathToFileURL(SOURCE);
    throw error;
  }
  return pathToFileURL(file);
};

/** The worker script's URL, built on first use; a failed build is tried again next time. */
export const lambdaWorkerEntry = (): Promise<URL> => {
  built ??= buildLambdaWorkerEntry().catch((error: unknown) => {
    built = undefined;
    throw new Error('could not build the local Lambda worker script', { cause: error });
  });
  return built;
};
