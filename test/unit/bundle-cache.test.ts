import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bundleOptions, externalModules } from '../../infra/bundling/bundle.ts';
import { bundleKey, cachedBuild } from '../../infra/bundling/bundle-cache.ts';

/** Writes a file as saved a minute ago: a bundle is kept only from files not written during its build. */
const saved = (path: string, text: string) => {
  writeFileSync(path, text);
  const minuteAgo = new Date(Date.now() - 60_000);
  utimesSync(path, minuteAgo, minuteAgo);
};

const read = (dir: string) => ({
  code: readFileSync(join(dir, 'index.mjs'), 'utf8'),
  map: readFileSync(join(dir, 'index.mjs.map'), 'utf8'),
});

describe('the bundle cache', () => {
  let dir = '';
  let cache = '';
  let entry = '';
  let dep = '';
  const out = (name: string) => join(dir, 'out', name);
  const options = (outdir: string, external: string[] = []) =>
    bundleOptions({ entry, outdir, external });
  const bundle = (outdir: string, external: string[] = []) =>
    cachedBuild(options(outdir, external), outdir, cache);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'onceflow-bundle-cache-'));
    cache = join(dir, 'cache');
    entry = join(dir, 'handler.ts');
    dep = join(dir, 'answer.ts');
    saved(dep, 'export const answer = 41;\n');
    saved(
      entry,
      "import { answer } from './answer.ts';\nexport const handler = async () => answer;\n",
    );
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('copies the bundle built before when nothing it was built from changed', async () => {
    expect(await bundle(out('a'))).toBe('built');
    expect(await bundle(out('b'))).toBe('reused');
    expect(read(out('b'))).toEqual(read(out('a')));
  });

  it('builds again when a file the bundle read changes, and reuses the new bundle after', async () => {
    await bundle(out('a'));
    saved(dep, 'export const answer = 42;\n');
    expect(await bundle(out('b'))).toBe('built');
    expect(read(out('b')).code).toContain('42');
    expect(read(out('b')).code).not.toContain('41');
    expect(await bundle(out('c'))).toBe('reused');
    expect(read(out('c'))).toEqual(read(out('b')));
  });

  it('keeps no bundle built from a file written while it was built', async () => {
    writeFileSync(dep, 'export const answer = 43;\n');
    expect(await bundle(out('a'))).toBe('built');
    expect(await bundle(out('b'))).toBe('built');
    expect(read(out('b')).code).toContain('43');
    saved(dep, 'export const answer = 43;\n');
    expect(await bundle(out('c'))).toBe('built');
    expect(await bundle(out('d'))).toBe('reused');
  });

  it('fails as esbuild fails when a file the bundle read is gone, rather than copying it', async () => {
    await bundle(out('a'));
    unlinkSync(dep);
    await expect(bundle(out('b'))).rejects.toThrow(/Could not resolve "\.\/answer\.ts"/);
  });

  it('builds again when the options change', async () => {
    const key = (outdir: string, external: string[] = []) =>
      bundleKey(options(outdir, external), outdir);
    expect(key(out('a'))).toBe(key(out('b')));
    expect(key(out('a'), ['x'])).not.toBe(key(out('a')));
    await bundle(out('a'));
    expect(await bundle(out('b'), ['x'])).toBe('built');
  });

  it('reuses a bundle only where its map names each source as a fresh build would', async () => {
    // Two places at the same depth, from which the sources are named differently.
    const beside = join(dir, 'beside', 'out');
    const elsewhere = join(dir, 'elsewhere', 'out');
    mkdirSync(join(dir, 'beside'));
    saved(join(dir, 'beside', 'handler.ts'), 'export const handler = async () => 7;\n');
    const o = (outdir: string) =>
      bundleOptions({ entry: join(dir, 'beside', 'handler.ts'), outdir, external: [] });
    const at = (outdir: string) => cachedBuild(o(outdir), outdir, cache);
    // One entry: only the sources' names tell the two apart.
    expect(bundleKey(o(beside), beside)).toBe(bundleKey(o(elsewhere), elsewhere));
    const sources = (outdir: string) => JSON.parse(read(outdir).map).sources;
    expect(await at(beside)).toBe('built');
    expect(sources(beside)).toContain('../handler.ts');
    expect(await at(elsewhere)).toBe('built');
    expect(sources(elsewhere)).toContain('../../beside/handler.ts');
    expect(await at(join(dir, 'elsewhere', 'again'))).toBe('reused');
    expect(read(join(dir, 'elsewhere', 'again'))).toEqual(read(elsewhere));
  });

  it('builds when the kept bundle is damaged or incomplete', async () => {
    await bundle(out('a'));
    const key = bundleKey(options(out('b')), out('b'));
    writeFileSync(join(cache, key, 'manifest.json'), '{"inputs": ');
    expect(await bundle(out('b'))).toBe('built');
    unlinkSync(join(cache, key, 'index.mjs.map'));
    expect(await bundle(out('c'))).toBe('built');
    expect(await bundle(out('d'))).toBe('reused');
  });

  it('gives a function the very bytes esbuild builds for it', async () => {
    const functionOptions = (outdir: string) =>
      bundleOptions({
        entry: join(import.meta.dirname, '..', '..', 'functions', 'ingest-orders.ts'),
        outdir,
        external: externalModules({ bundleAwsSdk: true, tracing: false }),
      });
    await build(functionOptions(out('fresh')));
    expect(await cachedBuild(functionOptions(out('a')), out('a'), cache)).toBe('built');
    expect(await cachedBuild(functionOptions(out('b')), out('b'), cache)).toBe('reused');
    expect(read(out('b'))).toEqual(read(out('fresh')));
  });
});
