/**
 * `npm run test:durations`: writes each test file's duration in the last `npm test` on this
 * machine (vitest's own record of it) to `test/durations.json`, which orders a fresh clone's run
 * (see sequencer.ts). Run it after a full, passing run when files were added or have grown (the
 * record keeps each file's last run, so a file run alone since counts with its time alone).
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';
import { DURATIONS_FILE } from './sequencer.ts';

const CACHE = join(import.meta.dirname, '..', '..', 'node_modules', '.vite', 'vitest');

const ResultsSchema = v.object({
  version: v.literal(1),
  projects: v.record(
    v.string(),
    v.object({
      files: v.record(v.string(), v.object({ failed: v.boolean(), duration: v.number() })),
    }),
  ),
});

const latest = readdirSync(CACHE)
  .map((dir) => join(CACHE, dir, 'results.json'))
  .filter((file) => existsSync(file))
  .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
if (!latest) throw new Error(`no vitest results under ${CACHE}: run npm test first`);
const results = v.parse(ResultsSchema, JSON.parse(readFileSync(latest, 'utf8')));
const ROOT = join(import.meta.dirname, '..', '..');
// The record keeps files deleted since: only the suite's own count.
const files = Object.values(results.projects)
  .flatMap((p) => Object.entries(p.files))
  .filter(([file]) => existsSync(join(ROOT, file)));
const failed = files.filter(([, r]) => r.failed).map(([f]) => f);
if (failed.length > 0)
  throw new Error(`the last run failed in ${failed.join(', ')}: record a passing one`);
const durations = Object.fromEntries(
  files
    .map(([file, r]) => [file, Math.max(1, Math.round(r.duration / 1000))] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
writeFileSync(DURATIONS_FILE, `${JSON.stringify(durations, null, 2)}\n`);
console.log(`${Object.keys(durations).length} files' durations written to ${DURATIONS_FILE}`);
