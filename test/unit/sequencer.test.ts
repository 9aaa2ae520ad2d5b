import { describe, expect, it } from 'vitest';
import { type LastRun, longestFirst, shortestFirst } from '../support/sequencer.ts';

describe('the order of test files', () => {
  const runs: Record<string, LastRun | undefined> = {
    short: { failed: false, ms: 1_000 },
    long: { failed: false, ms: 190_000 },
    middle: { failed: false, ms: 60_000 },
    new: undefined,
    failedShort: { failed: true, ms: 500 },
  };

  it('runs new files first, then those that failed, then the longest first', () => {
    expect(longestFirst(Object.keys(runs), (f) => runs[f])).toEqual([
      'new',
      'failedShort',
      'long',
      'middle',
      'short',
    ]);
  });

  it('gives the same order whatever order the files come in', () => {
    const once = longestFirst(Object.keys(runs), (f) => runs[f]);
    expect(longestFirst(Object.keys(runs).reverse(), (f) => runs[f])).toEqual(once);
  });

  it('runs the shortest first and new files last when asked to, for a run that stops at its first failure', () => {
    expect(shortestFirst(Object.keys(runs), (f) => runs[f])).toEqual([
      'failedShort',
      'short',
      'middle',
      'long',
      'new',
    ]);
  });
});
