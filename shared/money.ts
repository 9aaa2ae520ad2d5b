/**
 * Money as integer minor units in bigint, scaled by each currency's ISO 4217 exponent (cents
 * for USD, yen for JPY, fils for KWD): sums stay exact at any size and never pass through a
 * float.
 */

const DECIMAL = /^(0|[1-9]\d*)(?:\.(\d+))?$/;

/** `("25.5", 2)` → `2550n`; `("1500", 0)` → `1500n`. Throws unless a non-negative decimal with at most `exponent` fraction digits. */
export const toMinorUnits = (amount: string, exponent: number): bigint => {
  const match = DECIMAL.exec(amount);
  const fraction = match?.[2] ?? '';
  if (!match || fraction.length > exponent) {
    throw new RangeError(
      `not a decimal amount with at most ${exponent} fraction digits: ${amount}`,
    );
  }
  return (
    BigInt(match[1] ?? '0') * 10n ** BigInt(exponent) +
    BigInt(fraction.padEnd(exponent, '0') || '0')
  );
};

/** `(2550n, 2)` → `"25.50"`, `(1500n, 0)` → `"1500"`, `(2125n, 3)` → `"2.125"`: exactly `exponent` fraction digits. */
export const fromMinorUnits = (minor: bigint, exponent: number): string => {
  const sign = minor < 0n ? '-' : '';
  const abs = minor < 0n ? -minor : minor;
  if (exponent === 0) return `${sign}${abs}`;
  const scale = 10n ** BigInt(exponent);
  return `${sign}${abs / scale}.${(abs % scale).toString().padStart(exponent, '0')}`;
};
