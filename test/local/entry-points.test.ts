/**
 * `npm start` and the CLI as a user starts them: Node's compile cache on before anything loads,
 * and, once the cache holds the project's modules, no TypeScript stripper loaded at all; started
 * by an older Node, one line saying what to run instead.
 */
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../../local/process.ts';
import { parseJson } from '../support/json.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const NODE = join(ROOT, 'node_modules', '.bin', 'node');

/** Preloaded into the process: prints, as it exits, which of Node's own modules were amaro. */
const PROBE = `process.on('exit', () => process.stderr.write('stripper: ' + JSON.stringify(process.moduleLoadList.filter((m) => m.includes('amaro'))) + '\\n'));`;

/**
 * Starts `entry --help` with `dir` as the system's temporary directory, where the entry itself
 * must put the cache: `NODE_COMPILE_CACHE` is unset, as it would turn the cache on before the
 * entry loads (a TypeScript entry included).
 */
const start = async (entry: string, dir: string, probe: string) => {
  const { NODE_COMPILE_CACHE: _, ...env } = process.env;
  const r = await runProcess(NODE, ['--require', probe, entry, '--help'], {
    cwd: ROOT,
    env: { ...env, TMPDIR: dir },
  });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain('Usage:');
  const line = r.stderr.split('\n').find((l) => l.startsWith('stripper: '));
  if (!line) throw new Error(`the probe printed nothing: ${r.stderr}`);
  return parseJson(v.array(v.string()), line.slice('stripper: '.length));
};

describe.each([
  ['npm start', 'local/start.mjs'],
  ['the CLI', 'cli/onceflow.mjs'],
])('%s', (_, entry) => {
  it('fills the compile cache on its first start and loads no type stripper on the next', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'onceflow-entry-'));
    const probe = join(dir, 'probe.cjs');
    writeFileSync(probe, PROBE);
    // The first start strips the project's TypeScript, and keeps the result.
    expect(await start(entry, dir, probe)).not.toEqual([]);
    expect(readdirSync(join(dir, 'node-compile-cache'))).not.toEqual([]);
    expect(await start(entry, dir, probe)).toEqual([]);
  });

  it('says it needs Node 24 and how to get it when an older Node starts it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'onceflow-entry-'));
    // The global node of a machine that has not upgraded, as far as the entry can tell.
    const older = join(dir, 'older.cjs');
    writeFileSync(older, "Object.defineProperty(process.versions, 'node', { value: '20.20.2' });");
    const r = await runProcess(NODE, ['--require', older, entry, '--help'], { cwd: ROOT });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /needs Node\.js 24 or newer, and this is v20\.20\.2: run it through npm/,
    );
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
