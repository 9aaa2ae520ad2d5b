import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromMinorUnits, toMinorUnits } from '../../shared/money.ts';
import { formatHour, hourOf, hoursBetween, parseEventTime, parseHour } from '../../shared/time.ts';

describe('money', () => {
  it('reads decimals into exact minor units', () => {
    expect(toMinorUnits('25.50')).toBe(2550n);
    expect(toMinorUnits('25.5')).toBe(2550n);
    expect(toMinorUnits('0')).toBe(0n);
    expect(toMinorUnits('999999999999999.99')).toBe(99999999999999999n);
  });

  it('rejects what is not a non-negative decimal with at most two fraction digits', () => {
    for (const bad of ['-1', '1.234', '01', '1e3', '', '.5', '5.', ' 5']) {
      expect(() => toMinorUnits(bad)).toThrow(RangeError);
    }
  });

  it('round-trips any amount through minor units without loss', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 20n }), (minor) => {
        expect(toMinorUnits(fromMinorUnits(minor))).toBe(minor);
      }),
    );
  });

  it('sums amounts that floats would round', () => {
    const sum = ['0.10', '0.20', '0.70'].map(toMinorUnits).reduce((a, b) => a + b, 0n);
    expect(fromMinorUnits(sum)).toBe('1.00');
  });
});

describe('event time', () => {
  it('normalises offsets to UTC and buckets by the UTC hour', () => {
    const t = parseEventTime('2026-10-01T11:30:00+02:00');
    expect(t?.canonical).toBe('2026-10-01T09:30:00.000000000Z');
    expect(t && hourOf(t)).toBe('2026-10-01T09:00:00Z');
    const late = parseEventTime('2026-09-30T23:59:59.999999999-01:00');
    expect(late && hourOf(late)).toBe('2026-10-01T00:00:00Z');
  });

  it('keeps sub-millisecond precision in the canonical form, so ordering is exact', () => {
    const a = parseEventTime('2026-10-01T09:30:00.0000001Z');
    const b = parseEventTime('2026-10-01T09:30:00.0000002Z');
    expect(a && b && a.canonical < b.canonical).toBe(true);
  });

  it('rejects timestamps without an offset and impossible dates', () => {
    for (const bad of [
      '2026-10-01T09:30:00',
      '2026-10-01 09:30:00Z',
      '2026-02-30T09:30:00Z',
      '2026-10-01T24:00:00Z',
      '2026-10-01T09:60:00Z',
      '2026-10-01T09:30:00+25:00',
      '2026-10-01',
      '1696152600',
    ]) {
      expect(parseEventTime(bad), bad).toBeUndefined();
    }
  });

  it('orders canonical strings exactly as the instants they denote', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('1970-01-01T00:00:00Z'),
          max: new Date('9999-12-31T00:00:00Z'),
          noInvalidDate: true,
        }),
        fc.date({
          min: new Date('1970-01-01T00:00:00Z'),
          max: new Date('9999-12-31T00:00:00Z'),
          noInvalidDate: true,
        }),
        (x, y) => {
          const a = parseEventTime(x.toISOString());
          const b = parseEventTime(y.toISOString());
          expect(a && b && Math.sign(a.canonical.localeCompare(b.canonical))).toBe(
            Math.sign(x.getTime() - y.getTime()),
          );
        },
      ),
    );
  });

  it('lists the hours of a half-open interval', () => {
    const from = parseHour('2026-10-01T22:00:00Z') ?? 0;
    const to = parseHour('2026-10-02T01:00:00Z') ?? 0;
    expect(hoursBetween(from, to)).toEqual([
      '2026-10-01T22:00:00Z',
      '2026-10-01T23:00:00Z',
      '2026-10-02T00:00:00Z',
    ]);
    expect(formatHour(from + 59 * 60_000)).toBe('2026-10-01T22:00:00Z');
    expect(parseHour('2026-10-01T22:30:00Z')).toBeUndefined();
  });
});
