import { describe, expect, it } from 'vitest';
import {
  bodyPasses,
  InvalidFilterError,
  matchesPattern,
  parseFilterCriteria,
  UnsupportedFilterError,
} from '../../local/event-filter.ts';

const filters = (...patterns: unknown[]) =>
  parseFilterCriteria({ Filters: patterns.map((p) => ({ Pattern: JSON.stringify(p) })) });

describe('an SQS mapping’s FilterCriteria, as Lambda applies them', () => {
  it('matches each operator as EventBridge patterns do', () => {
    const event = {
      kind: 'order',
      status: 'Paid',
      amount: 25,
      tags: ['vip', 'eu'],
      note: 'ship-fast-2026',
      customer: { id: 'C01', country: 'FR' },
    };
    const cases: [Record<string, unknown>, boolean][] = [
      [{ kind: ['order'] }, true],
      [{ kind: ['refund', 'order'] }, true],
      [{ kind: ['refund'] }, false],
      [{ amount: [25] }, true],
      [{ amount: ['25'] }, false],
      [{ status: [{ prefix: 'Pa' }] }, true],
      [{ status: [{ prefix: { 'equals-ignore-case': 'pA' } }] }, true],
      [{ note: [{ suffix: '2026' }] }, true],
      [{ status: [{ 'equals-ignore-case': 'PAID' }] }, true],
      [{ note: [{ wildcard: 'ship-*-2026' }] }, true],
      [{ note: [{ wildcard: 'ship-*-2025' }] }, false],
      [{ kind: [{ 'anything-but': ['refund', 'void'] }] }, true],
      [{ kind: [{ 'anything-but': 'order' }] }, false],
      [{ kind: [{ 'anything-but': { prefix: 'ord' } }] }, false],
      [{ missing: [{ 'anything-but': 'x' }] }, false],
      [{ amount: [{ numeric: ['>', 0, '<=', 25] }] }, true],
      [{ amount: [{ numeric: ['>', 25] }] }, false],
      [{ amount: [{ numeric: ['=', 25] }] }, true],
      [{ kind: [{ exists: true }] }, true],
      [{ missing: [{ exists: false }] }, true],
      [{ kind: [{ exists: false }] }, false],
      // A value in an array matches when any element does.
      [{ tags: ['eu'] }, true],
      [{ tags: ['us'] }, false],
      // Nested fields; an absent parent satisfies only `exists: false` below it.
      [{ customer: { country: ['FR'] } }, true],
      [{ customer: { country: ['DE'] } }, false],
      [{ shipping: { carrier: [{ exists: false }] } }, true],
      [{ shipping: { carrier: ['ups'] } }, false],
      // Every key must match; `$or` takes any of its branches.
      [{ kind: ['order'], amount: [{ numeric: ['<', 10] }] }, false],
      [{ $or: [{ kind: ['refund'] }, { amount: [{ numeric: ['>', 10] }] }] }, true],
      [{ $or: [{ kind: ['refund'] }, { amount: [{ numeric: ['>', 100] }] }] }, false],
    ];
    for (const [pattern, expected] of cases)
      expect(matchesPattern(pattern, event), JSON.stringify(pattern)).toBe(expected);
  });

  it('matches a pattern of fields against the body parsed as JSON, and matchers against the body as it is', () => {
    const orders = filters({ body: { kind: ['order'] } });
    expect(bodyPasses(orders, '{"kind":"order"}')).toBe(true);
    expect(bodyPasses(orders, '{"kind":"refund"}')).toBe(false);
    // A body that is not a JSON object has no fields to match.
    expect(bodyPasses(orders, 'order')).toBe(false);
    expect(bodyPasses(orders, '["order"]')).toBe(false);
    const pings = filters({ body: ['ping', { prefix: 'health' }] });
    expect(bodyPasses(pings, 'ping')).toBe(true);
    expect(bodyPasses(pings, 'healthcheck')).toBe(true);
    expect(bodyPasses(pings, 'pong')).toBe(false);
    // Filters are alternatives; none at all lets every message through.
    expect(bodyPasses([...orders, ...pings], 'ping')).toBe(true);
    expect(bodyPasses([], 'anything')).toBe(true);
  });

  it('refuses a pattern Lambda refuses, and names one it cannot apply', () => {
    expect(() => parseFilterCriteria({ Filters: [{ Pattern: '{"body":' }] })).toThrow(
      new InvalidFilterError('Invalid filter pattern definition.'),
    );
    expect(() => filters({ body: 'order' })).toThrow(InvalidFilterError);
    expect(() => filters({ body: { ip: [{ cidr: '10.0.0.0/24' }] } })).toThrow(
      new UnsupportedFilterError('the cidr operator is not applied locally'),
    );
    expect(() => filters({ attributes: { SenderId: ['x'] } })).toThrow(
      new UnsupportedFilterError('a filter on attributes (SQS filters take body only)'),
    );
    expect(parseFilterCriteria(undefined)).toEqual([]);
  });
});
