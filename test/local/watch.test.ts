/**
 * The watcher behind `npm start -- --watch`, on real files: what it synthesizes and when, with a
 * synthesis and a runtime that record their calls.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../local/net.ts';
import type { StackUpdate } from '../../local/runtime.ts';
import { type WatchEvent, watchStack } from '../../local/watch.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';

const UPDATE: StackUpdate = { updated: [], restartNeeded: [], mappings: [] };

/** A project with the sources a synthesis reads, and a watcher on it whose steps are recorded. */
const watched = (o: { synthesize?: () => Promise<void>; withProject?: boolean } = {}) => {
  const dir = mkdtempSync(join(tmpdir(), 'onceflow-watch-'));
  const assemblyDir = join(dir, 'cdk.out');
  for (const folder of ['functions', 'shared/deep', 'cdk.out'])
    mkdirSync(join(dir, folder), { recursive: true });
  writeFileSync(join(dir, 'cdk.json'), '{}');
  const events: WatchEvent[] = [];
  const updates: string[] = [];
  let syntheses = 0;
  const watcher = watchStack({
    assemblyDir,
    ...(o.withProject === false
      ? {}
      : {
          project: {
            dir,
            sources: ['functions', 'shared', 'cdk.json'],
            synthesize: async () => {
              syntheses++;
              await o.synthesize?.();
            },
          },
        }),
    runtime: {
      update: async (assembly) => {
        updates.push(assembly);
        return UPDATE;
      },
    },
    report: (event) => events.push(event),
  });
  closers.push(() => watcher.close());
  const write = (file: string, text = String(Math.random())) =>
    writeFileSync(join(dir, file), text);
  const until = (what: string, done: () => boolean) =>
    waitFor(done, { timeoutMs: DEADLINE_MS, what, intervalMs: 20 });
  return {
    dir,
    assemblyDir,
    events,
    updates,
    syntheses: () => syntheses,
    write,
    until,
    /** The files each synthesis was started for. */
    rounds: () => events.flatMap((e) => (e.kind === 'synthesizing' ? [e.changed] : [])),
  };
};

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

describe('npm start -- --watch', () => {
  it('synthesizes once for a burst of saves, naming every file, then updates the runtime', async () => {
    const w = watched();
    w.write('functions/ingest.ts');
    w.write('shared/deep/keys.ts');
    w.write('shared/money.ts');
    w.write('cdk.json');
    await w.until('the runtime to be updated', () => w.updates.length === 1);
    expect(w.rounds()).toEqual([
      ['cdk.json', 'functions/ingest.ts', 'shared/deep/keys.ts', 'shared/money.ts'],
    ]);
    expect(w.syntheses()).toBe(1);
    expect(w.updates).toEqual([w.assemblyDir]);
    expect(w.events.map((e) => e.kind)).toEqual(['synthesizing', 'updated']);
  });

  it('takes the saves made during a synthesis with one more synthesis after it', async () => {
    let release = () => {};
    const first = new Promise<void>((resolve) => {
      release = resolve;
    });
    let running = 0;
    let mostAtOnce = 0;
    const w = watched({
      synthesize: async () => {
        mostAtOnce = Math.max(mostAtOnce, ++running);
        await (w.syntheses() === 1 ? first : Promise.resolve());
        running--;
      },
    });
    w.write('functions/a.ts');
    await w.until('the first synthesis to start', () => w.syntheses() === 1);
    w.write('functions/b.ts');
    w.write('shared/c.ts');
    // Past the quiet time, the saves wait for the running synthesis instead of starting one.
    await w.until('the saves to wait', () => w.events.some((e) => e.kind === 'pending'));
    expect(w.syntheses()).toBe(1);
    release();
    await w.until('the second update', () => w.updates.length === 2);
    expect(w.rounds()).toEqual([['functions/a.ts'], ['functions/b.ts', 'shared/c.ts']]);
    expect(mostAtOnce).toBe(1);
  });

  it('ignores editors’ swap and backup files, and files outside the sources', async () => {
    const w = watched();
    w.write('functions/.ingest.ts.swp');
    w.write('functions/ingest.ts~');
    w.write('README.md');
    w.write('shared/real.ts');
    await w.until('the runtime to be updated', () => w.updates.length === 1);
    expect(w.rounds()).toEqual([['shared/real.ts']]);
  });

  it('reports a failed synthesis and leaves the runtime alone', async () => {
    const w = watched({
      synthesize: () => Promise.reject(new Error('cdk synth failed (exit 1):\nTS2322 …')),
    });
    w.write('functions/broken.ts');
    await w.until('the failure to be reported', () => w.events.length === 2);
    expect(w.events[1]).toMatchObject({ kind: 'synth-failed' });
    expect(w.updates).toEqual([]);
  });

  it('updates the runtime when the watched assembly’s manifest is written again', async () => {
    const w = watched({ withProject: false });
    writeFileSync(join(w.assemblyDir, 'template.json'), '{}');
    writeFileSync(join(w.assemblyDir, 'manifest.json'), '{}');
    await w.until('the runtime to be updated', () => w.updates.length === 1);
    expect(w.events.map((e) => e.kind)).toEqual(['updated']);
  });
});
