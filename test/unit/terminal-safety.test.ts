import { describe, expect, it } from 'vitest';
import { terminalSafe, terminalSafeLine } from '../../local/render.ts';
import { boundDetail, InvalidMessageError, MAX_DETAIL_CHARACTERS } from '../../shared/errors.ts';

describe('printing untrusted text', () => {
  it('shows control, C1, bidi and separator characters as escapes instead of acting on the terminal', () => {
    const hostile = 'a\u001b]0;pwned\u0007\u001b[2Jb\u009bc\u202ed\u2028e\u2066f\u200fg\u007f';
    expect(terminalSafe(hostile)).toBe(
      'a\\u{001b}]0;pwned\\u{0007}\\u{001b}[2Jb\\u{009b}c\\u{202e}d\\u{2028}e\\u{2066}f\\u{200f}g\\u{007f}',
    );
  });

  it('keeps the tabs of a log line and escapes every other control character', () => {
    expect(terminalSafeLine('REPORT RequestId: 1\tDuration: 2 ms\t\u001b[2J')).toBe(
      'REPORT RequestId: 1\tDuration: 2 ms\t\\u{001b}[2J',
    );
    expect(terminalSafe('a\tb')).toBe('a\\u{0009}b');
  });

  it('leaves ordinary text alone, accents and emoji included', () => {
    const text = 'Café 1001 😀 ～ naïve';
    expect(terminalSafe(text)).toBe(text);
  });
});

describe('reject details', () => {
  it('are cut to 1,024 characters, never inside a surrogate pair, saying how much was left out', () => {
    const long = '😀'.repeat(3000);
    const bounded = boundDetail(long);
    expect([...(bounded.split('…')[0] ?? '')]).toHaveLength(MAX_DETAIL_CHARACTERS);
    expect(bounded.isWellFormed()).toBe(true);
    expect(bounded).toContain('1976 more characters; the body is kept whole');
    expect(new InvalidMessageError('schema-violation', long).detail).toBe(bounded);
  });

  it('stay as they are when short', () => {
    expect(boundDetail('events.0.amount: too many digits')).toBe(
      'events.0.amount: too many digits',
    );
  });
});
