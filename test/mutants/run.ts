/**
 * `npm run test:mutants -- [--only 3,7] [--files test/unit ...]`: whether the suite fails on
 * each mutation of `mutants.ts`. Each runs on a copy of the project in the system's temporary
 * directory (this working tree is never touched), with the test files that exercise the core
 * (unit, integration, property and the fixed-seed chaos) or those the mutant names (the local
 * poller's own tests), stopping at the first failure. Prints
 * which test caught each one; exits 1 when a mutant that changes behaviour survived, or one
 * marked equivalent was caught. Most mutants fail within seconds (the shortest test files run
 * first); one that survives runs the whole core suite, about four minutes on 2 cores.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, stripVTControlCharacters } from 'node:util';
import Table from 'cli-table3';
import { runProcess } from '../../local/process.ts';
import { TEST_ORDER_VARIABLE } from '../support/sequencer.ts';
import { MUTANTS, type Mutant } from './mutants.ts';

const ROOT = join(import.meta.dirname, '..', '..');
/** What the suite needs of the project; `node_modules` is linked, not copied. */
const ENTRIES = [
  'adapters',
  'bench',
  'cli',
  'functions',
  'harness',
  'infra',
  'local',
  'localstack',
  'shared',
  'test',
  'cdk.json',
  'package.json',
  'tsconfig.json',
  'vitest.config.ts',
];
/** The unit test that checks this list against the code (see below). */
const LIST_CHECK = 'test/unit/mutants-list.test.ts';
const DEFAULT_FILES = [
  'test/unit',
  'test/integration',
  'test/property',
  'test/chaos/chaos.test.ts',
];

const { values } = parseArgs({
  options: { only: { type: 'string' }, files: { type: 'string', multiple: true } },
});
const chosen = values.only
  ? values.only.split(',').map((n) => {
      const i = Number(n);
      if (!Number.isInteger(i) || !MUTANTS[i]) throw new Error(`--only: no mutant ${n}`);
      return i;
    })
  : MUTANTS.map((_, i) => i);

const copy = mkdtempSync(join(tmpdir(), 'onceflow-mutants-'));
for (const entry of ENTRIES) cpSync(join(ROOT, entry), join(copy, entry), { recursive: true });
symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));

/** The first test the run reports failed, as vitest names it. */
const caughtBy = (output: string) =>
  stripVTControlCharacters(output)
    .split('\n')
    .find((line) => /^\s*FAIL\s/.test(line))
    ?.replace(/^\s*FAIL\s+/, '')
    .trim();

interface Outcome {
  readonly index: number;
  readonly mutant: Mutant;
  readonly caught: boolean;
  readonly by: string;
  readonly seconds: number;
}

const outcomes: Outcome[] = [];
try {
  for (const index of chosen) {
    const mutant = MUTANTS[index] as Mutant;
    const file = join(copy, mutant.file);
    const original = readFileSync(file, 'utf8');
    if (original.split(mutant.from).length !== 2)
      throw new Error(`mutant ${index}: "${mutant.from}" is not in ${mutant.file} exactly once`);
    writeFileSync(file, original.replace(mutant.from, mutant.to));
    const started = Date.now();
    process.stderr.write(`mutant ${index} (${mutant.file}: ${mutant.breaks})… `);
    // No result cache: this project's next run must not see the mutants' failures. The list's
    // own check (each mutation's text in its file) fails on every mutated copy: left in, it
    // would report every mutant caught, whatever the suite does.
    const run = await runProcess(
      join(copy, 'node_modules', '.bin', 'vitest'),
      [
        'run',
        '--bail',
        '1',
        '--no-cache',
        '--exclude',
        LIST_CHECK,
        ...(values.files ?? mutant.files ?? DEFAULT_FILES),
      ],
      // Shortest files first: most mutations fall to a short file, in seconds.
      { cwd: copy, env: { ...process.env, [TEST_ORDER_VARIABLE]: 'shortest-first' } },
    );
    writeFileSync(file, original);
    const caught = run.code !== 0;
    const seconds = Math.round((Date.now() - started) / 1000);
    process.stderr.write(`${caught ? 'caught' : 'survived'} (${seconds} s)\n`);
    outcomes.push({
      index,
      mutant,
      caught,
      by: caught ? (caughtBy(run.stdout + run.stderr) ?? 'the run failed') : '',
      seconds,
    });
  }
} finally {
  rmSync(copy, { recursive: true, force: true });
}

const table = new Table({
  head: ['#', 'mutation', 'would break', 'outcome'],
  colWidths: [4, 44, 40, 44],
  wordWrap: true,
  style: { head: [], border: [] },
});
const wrong = outcomes.filter((o) => o.caught === (o.mutant.equivalent !== undefined));
for (const o of outcomes)
  table.push([
    o.index,
    `${o.mutant.file}: ${o.mutant.from} → ${o.mutant.to}`,
    o.mutant.breaks,
    o.caught
      ? `caught by ${o.by}${o.mutant.equivalent ? ' (marked equivalent!)' : ''}`
      : o.mutant.equivalent
        ? `survives, equivalent: ${o.mutant.equivalent}`
        : 'SURVIVED: no test fails',
  ]);
console.log(table.toString());
const changing = outcomes.filter((o) => !o.mutant.equivalent);
console.log(
  `${changing.filter((o) => o.caught).length} of ${changing.length} behaviour-changing mutants caught; ` +
    `${outcomes.length - changing.length} equivalent; ${outcomes.reduce((s, o) => s + o.seconds, 0)} s`,
);
process.exitCode = wrong.length > 0 ? 1 : 0;
