/**
 * Money as integer minor units (cents) in bigint: sums stay exact at any size, and never pass
 * through a float.
 */

const DECIMAL = /^(0|[1-9]\d*)(?:\.(\d{1,2}))?$/;

/** `"25.5"` → `2550n`. Throws on anything but a non-negative decimal with at most 2 fraction digits. */
export const toMinorUnits = (amount: string): bigint => {
  const match = DECIMAL.exec(amount);
  if (!match) throw new RangeError(`not a decimal amount: ${amount}`);
  const fraction = (match[2] ?? '').padEnd(2, '0');
  return BigInt(match[1] ?? '0') * 100n + BigInt(fraction);
};

/** `2550n` → `"25.50"`: always two fraction digits. */
export const fromMinorUnits = (minor: bigint): string => {
  const sign = minor < 0n ? '-' : '';
  const abs = minor < 0n ? -minor : minor;
  const cents = (abs % 100n).toString().padStart(2, '0');
  return `${sign}${abs / 100n}.${cents}`;
};
