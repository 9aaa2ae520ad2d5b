import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MUTANTS } from '../mutants/mutants.ts';

const ROOT = join(import.meta.dirname, '..', '..');

// `npm run test:mutants` takes a quarter of an hour and more; a mutation whose text a change of
// the code moved would only fail there. Checked here, the list keeps up with the code.
describe('the list of mutations', () => {
  it.each(MUTANTS.map((m, i) => [i, m] as const))(
    'finds mutation %i’s text exactly once in its file, and changes it',
    (_, mutant) => {
      const text = readFileSync(join(ROOT, mutant.file), 'utf8');
      expect(text.split(mutant.from)).toHaveLength(2);
      expect(mutant.to).not.toBe(mutant.from);
    },
  );

  it('names only test files and folders that exist', () => {
    const named = new Set(MUTANTS.flatMap((m) => m.files ?? []));
    expect([...named].filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
    expect(named.size).toBeGreaterThan(0);
  });
});
