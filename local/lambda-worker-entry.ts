/**
 * The script an environment's worker thread runs (`lambda-worker.ts`), as JavaScript. Run as
 * TypeScript, every environment would load Node's type stripper (a WebAssembly module) into its
 * own isolate before the bundle: 40 to 90 ms of CPU per cold start that Lambda's runtime does not
 * spend (an environment of an empty handler answered its first invocation in 127–152 ms with
 * it, 54–68 without). Built once per process with esbuild into
 * the system's temporary directory, under a name that is the hash of its content: processes
 * share it, and a changed script is never served from an older build.
 */
import { createHash } from 'node:crypto';
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

let built: Promise<URL> | undefined;

const buildEntry = async (): Promise<URL> => {
  const result = await build({
    entryPoints: [join(import.meta.dirname, 'lambda-worker.ts')],
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
  const file = join(tmpdir(), `onceflow-lambda-worker-${hash}.mjs`);
  if (!existsSync(file)) {
    // Written beside and renamed: a process starting a worker meanwhile sees all of it or none.
    const partial = `${file}.${process.pid}.partial`;
    writeFileSync(partial, text);
    renameSync(partial, file);
  }
  return pathToFileURL(file);
};

/** The worker script's URL, built on first use; a failed build is tried again next time. */
export const lambdaWorkerEntry = (): Promise<URL> => {
  built ??= buildEntry().catch((error: unknown) => {
    built = undefined;
    throw new Error('could not build the local Lambda worker script', { cause: error });
  });
  return built;
};
