import { describe, expect, it } from 'vitest';
import { describeInvocation } from '../../cli/commands/invoke.ts';
import { bodyLines } from '../../cli/input.ts';

describe('the bodies of an NDJSON file', () => {
  it('leaves blank lines out and keeps each body’s line in the file, for reports to name', () => {
    expect(bodyLines('{"a":1}\n\n  \n{"b":2}\n{"c":3}\n')).toEqual({
      bodies: ['{"a":1}', '{"b":2}', '{"c":3}'],
      lineOf: [1, 4, 5],
    });
    expect(bodyLines('')).toEqual({ bodies: [], lineOf: [] });
  });

  it('names failed records by their lines in the file', () => {
    const { lineOf } = bodyLines('{"a":1}\n\n{"b":2}\n{"c":3}');
    const [, failed] = describeInvocation(
      { functionName: 'fn', messageIds: ['m1', 'm2', 'm3'], failed: [2, 3] },
      lineOf,
    );
    expect(failed).toContain('✘ 2 of 3 records failed (lines 3, 4).');
  });
});
