/**
 * Function bundles kept by content: a synthesis whose functions' code has not changed copies
 * each bundle from the cache instead of running esbuild again (ingest's: 1.1 s built, 0.3 s
 * copied, hashes included; a test run synthesizes nine stacks). A bundle is reused only when
 * everything it was built from is the same, read afresh each time:
 *
 * - the esbuild version, the build options and the bundler's own code (this folder);
 * - the content of every file esbuild read for it (its metafile's inputs: the handler, the
 *   project's modules, each package file), hashed again at each lookup;
 * - `package-lock.json`, so that an install which changes what a package specifier resolves to
 *   is a miss even where every file read before is unchanged;
 * - the path from where the bundle is written to each of its sources, which its source map
 *   names: the only part of a bundle that depends on where it is written.
 *
 * The cache lives in `node_modules/.cache/onceflow/bundles`, so `npm ci` (a CI job, a fresh
 * clone) starts without it. Where it cannot be written, bundles are built as if it were not there.
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { type BuildOptions, build, type Metafile, version } from 'esbuild';
import * as v from 'valibot';

const PROJECT_ROOT = join(import.meta.dirname, '..', '..');

/** The project's cache of bundles. */
export const BUNDLE_CACHE = join(PROJECT_ROOT, 'node_modules', '.cache', 'onceflow', 'bundles');

/** What a bundle is: its code and its map, the files `bundleOptions` writes. */
const OUTPUTS = ['index.mjs', 'index.mjs.map'] as const;

const ManifestSchema = v.object({
  /** Each file esbuild read, by absolute path, and its content's SHA-256. */
  inputs: v.record(v.string(), v.string()),
  /** The source map's sources: as it names them, and by absolute path. */
  sources: v.object({ named: v.array(v.string()), paths: v.array(v.string()) }),
});

const MapSchema = v.object({ sources: v.array(v.string()) });

/** A source as a map written in `outdir` names it (esbuild's form: relative, with slashes). */
const nameFrom = (outdir: string, path: string): string =>
  relative(outdir, path).split(sep).join('/');

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** What makes a path unreadable as a file: nothing there, or a directory. */
const GONE = new Set(['ENOENT', 'EISDIR', 'ENOTDIR']);

/** A file's content; undefined when there is none (gone, a directory…). */
const readBytes = (path: string): Buffer | undefined => {
  try {
    return readFileSync(path);
  } catch (error) {
    if (GONE.has((error as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw error;
  }
};

const readText = (path: string): string | undefined => readBytes(path)?.toString('utf8');

const hashOf = (path: string): string | undefined => {
  const bytes = readBytes(path);
  return bytes === undefined ? undefined : sha256(bytes);
};

/** A damaged manifest is a miss, not an error. */
const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** Errors of a cache that cannot be written (a read-only install, a full disk…). */
const UNWRITABLE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'ENOSPC']);
const isUnwritable = (error: unknown): boolean =>
  error instanceof Error && UNWRITABLE.has((error as NodeJS.ErrnoException).code ?? '');

/** The bundler's own modules: a change to a plugin changes every bundle. */
const bundlerSources = (): Record<string, string | undefined> =>
  Object.fromEntries(
    readdirSync(import.meta.dirname)
      .sort()
      .map((file) => [file, hashOf(join(import.meta.dirname, file))]),
  );

/**
 * The key of a bundle's entry: everything that decides it but its inputs' content. Where it is
 * written counts by its path to the project, so that `cdk.out` and the test assemblies, deeper,
 * keep an entry each; what that path decides, the names of the sources, is checked by `reuse`.
 */
export const bundleKey = (options: BuildOptions, outdir: string): string =>
  sha256(
    JSON.stringify({
      esbuild: version,
      // Plugins are functions: their names here, their code in the bundler's sources.
      options: { ...options, outfile: undefined, plugins: options.plugins?.map((p) => p.name) },
      fromOutdirToProject: relative(outdir, PROJECT_ROOT),
      bundler: bundlerSources(),
      lockfile: hashOf(join(PROJECT_ROOT, 'package-lock.json')),
    }),
  );

/** The entry's bundle, copied to `outdir`, when every input it was built from is unchanged. */
const reuse = (entry: string, outdir: string): boolean => {
  const manifestFile = join(entry, 'manifest.json');
  const manifest = readText(manifestFile);
  if (manifest === undefined) return false;
  const parsed = v.safeParse(ManifestSchema, parseJson(manifest));
  if (!parsed.success) return false;
  const { inputs, sources } = parsed.output;
  const unchanged = Object.entries(inputs).every(([path, hash]) => hashOf(path) === hash);
  const named = sources.paths.map((path) => nameFrom(outdir, path));
  if (!unchanged || named.join('\n') !== sources.named.join('\n')) return false;
  mkdirSync(outdir, { recursive: true });
  try {
    for (const file of OUTPUTS) copyFileSync(join(entry, file), join(outdir, file));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  // Another synthesis may have replaced the entry while it was copied: the copy is the bundle
  // checked only if the manifest is still the one read.
  return readText(manifestFile) === manifest;
};

/**
 * The files esbuild read, by absolute path (the metafile names them from its working dir), each
 * with its content's hash; undefined when the bundle cannot be kept: an input outside the file
 * system (a plugin's namespace, whose content no hash can check), or one written to since a
 * second before the build began, whose hash now may not be what esbuild read.
 */
const inputsOf = (
  metafile: Metafile,
  workingDir: string,
  builtSinceMs: number,
): Record<string, string> | undefined => {
  const names = Object.keys(metafile.inputs);
  if (names.some((name) => /^[a-z-]+:/.test(name))) return undefined;
  const paths = names.map((name) => (isAbsolute(name) ? name : resolve(workingDir, name)));
  // A second of margin: a file's time comes from a coarser clock than Date.now().
  const writtenMs = (path: string) =>
    statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Number.POSITIVE_INFINITY;
  if (paths.some((path) => writtenMs(path) >= builtSinceMs - 1000)) return undefined;
  return Object.fromEntries(paths.map((path) => [path, hashOf(path) ?? '']));
};

/** Keeps the bundle just built in `outdir` under `entry`, whole or not at all. */
const keep = (entry: string, outdir: string, inputs: Record<string, string>): void => {
  const map = v.parse(MapSchema, JSON.parse(readFileSync(join(outdir, 'index.mjs.map'), 'utf8')));
  const sources = { named: map.sources, paths: map.sources.map((s) => resolve(outdir, s)) };
  try {
    mkdirSync(dirname(entry), { recursive: true });
    const staging = mkdtempSync(`${entry}.staging-`);
    for (const file of OUTPUTS) copyFileSync(join(outdir, file), join(staging, file));
    writeFileSync(join(staging, 'manifest.json'), JSON.stringify({ inputs, sources }));
    rmSync(entry, { recursive: true, force: true });
    try {
      renameSync(staging, entry);
    } catch (error) {
      // Another synthesis kept the same bundle first.
      rmSync(staging, { recursive: true, force: true });
      if (!existsSync(entry)) throw error;
    }
  } catch (error) {
    if (!isUnwritable(error)) throw error;
  }
};

/**
 * Builds a bundle with `options` into `outdir`, or copies it from the cache when nothing it
 * would be built from changed. Says which it did.
 */
export const cachedBuild = async (
  options: BuildOptions,
  outdir: string,
  cacheDir: string = BUNDLE_CACHE,
): Promise<'reused' | 'built'> => {
  const entry = join(cacheDir, bundleKey(options, outdir));
  if (reuse(entry, outdir)) return 'reused';
  const startedMs = Date.now();
  const result = await build({ ...options, metafile: true });
  const inputs =
    result.metafile && inputsOf(result.metafile, options.absWorkingDir ?? process.cwd(), startedMs);
  if (inputs) keep(entry, outdir, inputs);
  return 'built';
};
