import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CURRENCIES, currencyExponent } from '../../shared/currencies.ts';
import { fromMinorUnits, toMinorUnits } from '../../shared/money.ts';
import {
  formatHour,
  hourOf,
  hoursBetween,
  parseEventTime,
  parseHour,
  readEventTime,
} from '../../shared/time.ts';

describe('money', () => {
  it('reads decimals into exact minor units of the currency exponent', () => {
    expect(toMinorUnits('25.50', 2)).toBe(2550n);
    expect(toMinorUnits('25.5', 2)).toBe(2550n);
    expect(toMinorUnits('0', 2)).toBe(0n);
    expect(toMinorUnits('999999999999999.99', 2)).toBe(99999999999999999n);
    expect(toMinorUnits('1500', 0)).toBe(1500n);
    expect(toMinorUnits('2.125', 3)).toBe(2125n);
    expect(toMinorUnits('0.0001', 4)).toBe(1n);
  });

  it('renders exactly the exponent’s fraction digits: JPY none, KWD three, USD two', () => {
    expect(fromMinorUnits(1500n, 0)).toBe('1500');
    expect(fromMinorUnits(2125n, 3)).toBe('2.125');
    expect(fromMinorUnits(5n, 3)).toBe('0.005');
    expect(fromMinorUnits(2550n, 2)).toBe('25.50');
    expect(fromMinorUnits(1n, 4)).toBe('0.0001');
  });

  it('rejects what is not a non-negative decimal within the exponent’s fraction digits', () => {
    for (const [bad, exponent] of [
      ['-1', 2],
      ['1.234', 2],
      ['1.5', 0],
      ['1.0', 0],
      ['01', 2],
      ['1e3', 2],
      ['', 2],
      ['.5', 2],
      ['5.', 2],
      [' 5', 2],
    ] as const) {
      expect(() => toMinorUnits(bad, exponent), bad).toThrow(RangeError);
    }
  });

  it('round-trips any amount through minor units without loss, for every exponent', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 20n }),
        fc.constantFrom(0, 2, 3, 4),
        (minor, exponent) => {
          expect(toMinorUnits(fromMinorUnits(minor, exponent), exponent)).toBe(minor);
        },
      ),
    );
  });

  it('sums amounts that floats would round', () => {
    const sum = ['0.10', '0.20', '0.70'].map((a) => toMinorUnits(a, 2)).reduce((a, b) => a + b, 0n);
    expect(fromMinorUnits(sum, 2)).toBe('1.00');
  });
});

describe('currencies', () => {
  it('knows the active ISO 4217 codes with their exponents and refuses withdrawn or non-money ones', () => {
    expect(currencyExponent('JPY')).toBe(0);
    expect(currencyExponent('USD')).toBe(2);
    expect(currencyExponent('KWD')).toBe(3);
    expect(currencyExponent('CLF')).toBe(4);
    expect(currencyExponent('XCG')).toBe(2);
    for (const code of ['BGN', 'HRK', 'ANG', 'ZWL', 'XAU', 'XXX', 'XTS', 'ABC']) {
      expect(currencyExponent(code), code).toBeUndefined();
    }
    expect(CURRENCIES.length).toBe(165);
    expect(CURRENCIES.every((c) => /^[A-Z]{3}$/.test(c))).toBe(true);
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

  it('orders a leap second as the last instant of its minute, before the next minute', () => {
    const leap = parseEventTime('2016-12-31T23:59:60Z');
    const before = parseEventTime('2016-12-31T23:59:59.999999998Z');
    const after = parseEventTime('2017-01-01T00:00:00Z');
    expect(leap?.canonical).toBe('2016-12-31T23:59:59.999999999Z');
    expect(leap && hourOf(leap)).toBe('2016-12-31T23:00:00Z');
    expect(before && leap && after && before.canonical < leap.canonical).toBe(true);
    expect(leap && after && leap.canonical < after.canonical).toBe(true);
    // 23:59:60 UTC written with an offset.
    expect(parseEventTime('2016-12-31T18:59:60-05:00')?.canonical).toBe(leap?.canonical);
  });

  it('refuses a second 60 anywhere but 23:59 UTC on the last day of a month, and says why', () => {
    for (const bad of [
      '2016-12-31T23:58:60Z',
      '2016-12-30T23:59:60Z',
      '2016-12-31T23:59:60+01:00',
    ]) {
      const result = readEventTime(bad);
      expect(result.ok, bad).toBe(false);
      expect(result.ok ? '' : result.problem).toContain('leap second');
    }
  });

  it('reads years 0001–0099 as themselves, not as 1901–1999', () => {
    expect(parseEventTime('0001-01-01T00:00:00Z')?.canonical).toBe(
      '0001-01-01T00:00:00.000000000Z',
    );
    const early = parseEventTime('0050-06-15T12:30:00Z');
    expect(early?.canonical).toBe('0050-06-15T12:30:00.000000000Z');
    expect(early && hourOf(early)).toBe('0050-06-15T12:00:00Z');
    expect(early?.epochMs).toBe(Date.parse('0050-06-15T12:30:00Z'));
    expect(parseEventTime('0099-12-31T23:00:00-01:00')?.canonical).toBe(
      '0100-01-01T00:00:00.000000000Z',
    );
  });

  it('refuses instants outside 0001–9999 UTC with a reason that names the range', () => {
    for (const bad of [
      '0000-06-01T00:00:00Z',
      '0001-01-01T00:30:00+01:00',
      '9999-12-31T23:30:00-01:00',
    ]) {
      const result = readEventTime(bad);
      expect(result.ok, bad).toBe(false);
      expect(result.ok ? '' : result.problem).toContain('0001-01-01T00:00:00Z and 9999-12-31');
    }
  });

  it('orders canonical strings exactly as the instants they denote', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('0001-01-01T00:00:00Z'),
          max: new Date('9999-12-31T00:00:00Z'),
          noInvalidDate: true,
        }),
        fc.date({
          min: new Date('0001-01-01T00:00:00Z'),
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
