/**
 * An SQS event source mapping's `FilterCriteria`, applied as Lambda applies them: each filter is
 * an EventBridge-style pattern on the record's `body` (the only key SQS filters take), an object
 * pattern matching the body parsed as JSON, an array of matchers matching the body as a string.
 * A message no filter matches is deleted unseen. Pure: patterns and matching, no AWS.
 *
 * Matchers: exact values, `prefix`, `suffix`, `equals-ignore-case`, `wildcard`, `anything-but`
 * (values, `prefix` or `suffix`), `numeric`, `exists`, and `$or`. A value in an array matches
 * when any element does.
 */

/** A filter the local runtime cannot apply as Lambda would (an operator it does not know). */
export class UnsupportedFilterError extends Error {
  override readonly name = 'UnsupportedFilterError';
}

/** A filter Lambda refuses: `CreateEventSourceMapping` answers with this message. */
export class InvalidFilterError extends Error {
  override readonly name = 'InvalidFilterError';
}

/** One filter: an EventBridge-style pattern on the SQS record. */
export type FilterPattern = Readonly<Record<string, unknown>>;
type Pattern = FilterPattern;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const KNOWN_OPERATORS = new Set([
  'prefix',
  'suffix',
  'equals-ignore-case',
  'wildcard',
  'anything-but',
  'numeric',
  'exists',
]);

/** Checks a pattern's operators, so that matching never meets one it cannot judge. */
const checkPattern = (pattern: unknown): void => {
  if (!isObject(pattern)) throw new InvalidFilterError('Invalid filter pattern definition.');
  for (const [key, value] of Object.entries(pattern)) {
    if (key === '$or') {
      if (!Array.isArray(value)) throw new InvalidFilterError('Invalid filter pattern definition.');
      for (const branch of value) checkPattern(branch);
    } else if (Array.isArray(value)) {
      for (const matcher of value)
        if (isObject(matcher))
          for (const op of Object.keys(matcher))
            if (!KNOWN_OPERATORS.has(op))
              throw new UnsupportedFilterError(`the ${op} operator is not applied locally`);
    } else if (isObject(value)) checkPattern(value);
    else throw new InvalidFilterError('Invalid filter pattern definition.');
  }
};

/**
 * The mapping's filters, from its `FilterCriteria` (`{ Filters: [{ Pattern: "<json>" }] }`).
 * Throws InvalidFilterError for what Lambda refuses, UnsupportedFilterError for what the local
 * runtime cannot apply.
 */
export const parseFilterCriteria = (criteria: unknown): Pattern[] => {
  const filters = isObject(criteria) && Array.isArray(criteria.Filters) ? criteria.Filters : [];
  return filters.map((filter) => {
    const text = isObject(filter) ? filter.Pattern : undefined;
    let pattern: unknown;
    try {
      pattern = JSON.parse(String(text));
    } catch {
      throw new InvalidFilterError('Invalid filter pattern definition.');
    }
    checkPattern(pattern);
    if (!isObject(pattern)) throw new InvalidFilterError('Invalid filter pattern definition.');
    const keys = Object.keys(pattern);
    if (keys.some((key) => key !== 'body'))
      throw new UnsupportedFilterError(
        `a filter on ${keys.filter((k) => k !== 'body').join(', ')} (SQS filters take body only)`,
      );
    return pattern;
  });
};

const wildcard = (pattern: string) =>
  new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    's',
  );

/** Whether `value` (undefined: the field is absent) satisfies one matcher. */
const matchesOne = (matcher: unknown, value: unknown): boolean => {
  if (!isObject(matcher)) return value === matcher;
  const [op, arg] = Object.entries(matcher)[0] ?? [];
  if (op === 'exists') return (value !== undefined) === arg;
  if (value === undefined) return false;
  const text = typeof value === 'string' ? value : undefined;
  switch (op) {
    case 'prefix':
      return isObject(arg)
        ? text?.toLowerCase().startsWith(String(arg['equals-ignore-case']).toLowerCase()) === true
        : text?.startsWith(String(arg)) === true;
    case 'suffix':
      return isObject(arg)
        ? text?.toLowerCase().endsWith(String(arg['equals-ignore-case']).toLowerCase()) === true
        : text?.endsWith(String(arg)) === true;
    case 'equals-ignore-case':
      return text?.toLowerCase() === String(arg).toLowerCase();
    case 'wildcard':
      return text !== undefined && wildcard(String(arg)).test(text);
    case 'anything-but':
      if (isObject(arg)) return !matchesOne(arg, value);
      return !(Array.isArray(arg) ? arg : [arg]).some((excluded) => excluded === value);
    case 'numeric': {
      if (typeof value !== 'number' || !Array.isArray(arg)) return false;
      for (let i = 0; i + 1 < arg.length; i += 2) {
        const [cmp, bound] = [arg[i], Number(arg[i + 1])];
        const ok =
          cmp === '='
            ? value === bound
            : cmp === '<'
              ? value < bound
              : cmp === '<='
                ? value <= bound
                : cmp === '>'
                  ? value > bound
                  : cmp === '>='
                    ? value >= bound
                    : false;
        if (!ok) return false;
      }
      return true;
    }
    default:
      return false;
  }
};

/** Whether an event (or a part of one) matches a pattern. */
export const matchesPattern = (pattern: Pattern, event: unknown): boolean =>
  Object.entries(pattern).every(([key, expected]) => {
    if (key === '$or')
      return (expected as Pattern[]).some((branch) => matchesPattern(branch, event));
    const value = isObject(event) ? event[key] : undefined;
    const values = Array.isArray(value) ? value : [value];
    if (Array.isArray(expected))
      return expected.some((matcher) => values.some((v) => matchesOne(matcher, v)));
    return values.some((v) => matchesPattern(expected as Pattern, isObject(v) ? v : undefined));
  });

/** Whether an SQS message body passes the mapping's filters (none: every message does). */
export const bodyPasses = (filters: readonly Pattern[], body: string): boolean => {
  if (filters.length === 0) return true;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  return filters.some((filter) => {
    const expected = filter.body;
    // Matchers match the body as it is; a pattern of fields, its JSON (a plain string has none).
    if (Array.isArray(expected)) return matchesPattern(filter, { body });
    return isObject(parsed) && matchesPattern(filter, { body: parsed });
  });
};
