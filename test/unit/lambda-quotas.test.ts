import { describe, expect, it } from 'vitest';
import {
  ENVIRONMENT_BYTES,
  environmentBytes,
  environmentRefusal,
} from '../../local/lambda-quotas.ts';

/** One variable whose compact JSON, `{"KEY":"<value>"}`, is exactly `bytes` long. */
const ofBytes = (bytes: number, fill = 'x') => ({
  KEY: fill.repeat((bytes - '{"KEY":""}'.length) / Buffer.byteLength(fill)),
});

describe('a function environment as Lambda accepts it', () => {
  it('accepts 4,096 bytes of compact JSON and refuses one byte more, naming both sizes', () => {
    expect(environmentBytes(ofBytes(ENVIRONMENT_BYTES))).toBe(4096);
    expect(environmentRefusal(ofBytes(ENVIRONMENT_BYTES))).toBeUndefined();
    expect(environmentRefusal(ofBytes(ENVIRONMENT_BYTES + 1))).toBe(
      'Lambda was unable to configure your environment variables because the environment ' +
        'variables you have provided exceeded the 4KB limit (4097 bytes measured, 4096 allowed)',
    );
  });

  it('counts UTF-8 bytes and JSON escapes, not characters, when values are not plain ASCII', () => {
    // 2,043 two-byte characters: 4,086 bytes of value, 4,096 in all, 2,053 characters.
    const accented = ofBytes(ENVIRONMENT_BYTES, 'é');
    expect(JSON.stringify(accented).length).toBe(2053);
    expect(environmentRefusal(accented)).toBeUndefined();
    expect(environmentRefusal({ KEY: `${accented.KEY}é` })).toMatch(/4098 bytes measured/);
    // A quote is two bytes once escaped.
    expect(environmentBytes({ KEY: '"' })).toBe(environmentBytes({ KEY: 'ab' }));
    // Across several variables, with the commas and quotes between them.
    expect(environmentBytes({ AB: '1', CD: '2' })).toBe('{"AB":"1","CD":"2"}'.length);
  });

  it('names every reserved key set, in order, when the environment sets Lambda’s own', () => {
    expect(
      environmentRefusal({ TABLE_NAME: 't', LAMBDA_TASK_ROOT: '/x', AWS_REGION: 'us-east-1' }),
    ).toMatch(/Reserved keys used in this request: AWS_REGION, LAMBDA_TASK_ROOT$/);
    expect(environmentRefusal({ TZ: 'UTC', AWS_ENDPOINT_URL: 'http://x' })).toBeUndefined();
  });

  it('refuses a name Lambda’s pattern does not allow, naming it', () => {
    // `_HANDLER` is reserved too, but the pattern refuses it first.
    for (const name of ['A', '1AB', 'A-B', 'ÄB', '', '_HANDLER']) {
      expect(environmentRefusal({ [name]: 'v' })).toBe(
        `environment variable name ${JSON.stringify(name)} must satisfy the pattern ^[a-zA-Z][a-zA-Z0-9_]+$`,
      );
    }
    expect(environmentRefusal({ a_1: 'v', Ab: 'v' })).toBeUndefined();
  });
});
