/**
 * SQS accepts message bodies with any XML character: #x9, #xA, #xD, #x20–#xD7FF, #xE000–#xFFFD
 * and #x10000–#x10FFFF. fauxqs 2.4.1 checks them with a pattern that lacks the Unicode flag, so a
 * supplementary character (an emoji: a surrogate pair in JavaScript) is refused as invalid. This
 * gap-filler gives fauxqs's check SQS's rule: it replaces the `test` of that one pattern object
 * (shared by every fauxqs module that validates bodies), after a probe shows the gap, and only
 * then. Lone surrogates and the other invalid characters stay refused. It reaches the pattern by
 * fauxqs's own module URL, so it works where fauxqs is loaded by Node itself (`npm start`, the
 * CLI, test workers); the edge confirms it with a real send before relying on it.
 */

/** SQS's rule, code point by code point. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the rule names the allowed controls
const INVALID_SQS_CHARACTER = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** The fauxqs module that holds its body check; undefined when its layout changed. */
const fauxqsTypes = async (): Promise<{ INVALID_MESSAGE_BODY_CHAR?: RegExp } | undefined> => {
  try {
    // The same URL fauxqs's own modules import it by, so the same module instance.
    const app = import.meta.resolve('fauxqs');
    return (await import(new URL('./sqs/sqsTypes.js', app).href)) as {
      INVALID_MESSAGE_BODY_CHAR?: RegExp;
    };
  } catch {
    return undefined;
  }
};

/**
 * Applies SQS's rule to fauxqs's check when it refuses `probe` (a body with an emoji); returns
 * whether the check is SQS's now.
 */
export const acceptSupplementaryCharacters = async (): Promise<boolean> => {
  const check = (await fauxqsTypes())?.INVALID_MESSAGE_BODY_CHAR;
  if (!check) return false;
  const probe = 'order \u{1F4E6} shipped';
  if (!check.test(probe)) return true;
  check.test = (text: string) => INVALID_SQS_CHARACTER.test(text);
  return !check.test(probe) && check.test('lone \uD800 surrogate');
};
