/**
 * SQS accepts message bodies with any XML character: #x9, #xA, #xD, #x20–#xD7FF, #xE000–#xFFFD
 * and #x10000–#x10FFFF. fauxqs 2.4.1 checks them with a pattern that lacks the Unicode flag, so a
 * supplementary character (an emoji: a surrogate pair in JavaScript) is refused as invalid. This
 * gap-filler gives fauxqs's check SQS's rule: it replaces the `test` of that one pattern object
 * (shared by every fauxqs module that validates bodies), after a probe shows the gap, and only
 * then. Lone surrogates and the other invalid characters stay refused. It reaches the pattern by
 * fauxqs's own module URL (`fauxqs-modules.ts`); the edge confirms it with a real send before
 * relying on it.
 */
import { fauxqsModule } from './fauxqs-modules.ts';

/** SQS's rule, code point by code point. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the rule names the allowed controls
const INVALID_SQS_CHARACTER = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** The fauxqs module that holds its body check; undefined when its layout changed. */
const fauxqsTypes = async (): Promise<{ INVALID_MESSAGE_BODY_CHAR?: RegExp } | undefined> => {
  try {
    return await fauxqsModule<{ INVALID_MESSAGE_BODY_CHAR?: RegExp }>('./dist/sqs/sqsTypes.js');
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
