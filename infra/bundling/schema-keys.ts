/**
 * Literal keys in the AWS SDK's generated schemas, so that esbuild drops the schemas of the
 * operations a function never calls.
 *
 * Each client describes all its operations in generated modules (`dist-es/schemas/schemas_0.js`)
 * whose trait objects use computed keys naming module-level string constants
 * (`{ [_hH]: "x-amz-acl" }`). esbuild must assume that a computed key may run code (a getter,
 * a `toString`), so it keeps every statement holding one, and with them every schema they
 * reach: each function carried the schema of every S3 operation (SelectObjectContent, the bucket
 * configurations…), evaluated at every init; 58 KB of the ingest bundle with the other clients'
 * leftovers (aws/aws-sdk-js-v3#7607; the generator's fix, smithy-lang/smithy-typescript#1889,
 * writes literal keys). This writes each such key as the literal its constant holds, as the fixed
 * generator does. A module with no such key passes unchanged.
 */
/** `const _hH = "httpHeader";` on a line of its own, as the generator writes its string table. */
const STRING_CONSTANT = /^const (_\w+) = ("(?:[^"\\\n]|\\.)*");$/gm;
/** A computed key right after `{` or `,`: a property of an object literal, never an array. */
const COMPUTED_KEY = /([{,]\s*)\[(_\w+)\]:/g;

const bindingsOf = (source: string, name: string): number =>
  source.match(new RegExp(`\\b(?:const|let|var|function|class)\\s+${name}\\b`, 'g'))?.length ?? 0;

/** `source` with each computed key that names a module-level string constant made literal. */
export const literalSchemaKeys = (source: string): string => {
  const literals = new Map<string, string>();
  for (const [, name, literal] of source.matchAll(STRING_CONSTANT)) {
    if (name === undefined || literal === undefined) continue;
    // Only a name bound once in the module is surely that constant wherever it appears.
    if (bindingsOf(source, name) !== 1) continue;
    const value: unknown = JSON.parse(literal);
    // `{ ["__proto__"]: v }` defines a property, a literal `"__proto__": v` sets the prototype.
    if (typeof value === 'string' && value !== '__proto__') literals.set(name, literal);
  }
  if (literals.size === 0) return source;
  return source.replace(
    COMPUTED_KEY,
    (_key, before: string, name: string) => `${before}${literals.get(name) ?? `[${name}]`}:`,
  );
};

/** The generated schema modules of every AWS SDK client, wherever npm installed it. */
export const SCHEMA_MODULES =
  /[\\/]@aws-sdk[\\/]client-[^\\/]+[\\/]dist-es[\\/]schemas[\\/][^\\/]+\.js$/;
