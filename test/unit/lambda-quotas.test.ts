import { describe, expect, it } from 'vitest';
import {
  ENVIRONMENT_BYTES,
  environmentBytes,
  environmentRefusal,
  type MappingCheck,
  mappingRefusal,
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

describe('an SQS event source mapping as Lambda creates it', () => {
  const mapping = (o: Partial<MappingCheck> = {}): MappingCheck => ({
    batchSize: 10,
    batchingWindowSeconds: 0,
    maxConcurrency: undefined,
    queue: { visibilityTimeoutSeconds: 180, fifo: false },
    functionTimeoutSeconds: 60,
    ...o,
  });

  it('accepts what Lambda accepts: a visibility timeout equal to the function’s, large batches with a window, the longest window', () => {
    expect(mappingRefusal(mapping())).toBeUndefined();
    expect(
      mappingRefusal(mapping({ queue: { visibilityTimeoutSeconds: 60, fifo: false } })),
    ).toBeUndefined();
    expect(
      mappingRefusal(mapping({ batchSize: 10_000, batchingWindowSeconds: 1 })),
    ).toBeUndefined();
    expect(mappingRefusal(mapping({ batchingWindowSeconds: 300 }))).toBeUndefined();
    expect(mappingRefusal(mapping({ maxConcurrency: 2 }))).toBeUndefined();
    expect(mappingRefusal(mapping({ maxConcurrency: 1000 }))).toBeUndefined();
    expect(
      mappingRefusal(mapping({ queue: { visibilityTimeoutSeconds: 180, fifo: true } })),
    ).toBeUndefined();
  });

  it('refuses, in Lambda’s words, a queue whose visibility timeout is shorter than the function’s timeout', () => {
    expect(mappingRefusal(mapping({ queue: { visibilityTimeoutSeconds: 30, fifo: false } }))).toBe(
      'Queue visibility timeout: 30 seconds is less than Function timeout: 60 seconds',
    );
  });

  it('refuses a batch over 10 without a window, a window on a FIFO queue, and values out of range', () => {
    const refusals: [Partial<MappingCheck>, string][] = [
      [
        { batchSize: 11 },
        'Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10',
      ],
      [
        { batchingWindowSeconds: 1, queue: { visibilityTimeoutSeconds: 180, fifo: true } },
        'Batching window is not supported for FIFO queues',
      ],
      [
        { batchSize: 11, queue: { visibilityTimeoutSeconds: 180, fifo: true } },
        'Maximum batch size for a FIFO queue is 10 (given 11)',
      ],
      [
        { batchSize: 0 },
        "1 validation error detected: Value '0' at 'batchSize' failed to satisfy constraint: Member must have value greater than or equal to 1",
      ],
      [
        { batchSize: 10_001, batchingWindowSeconds: 1 },
        "1 validation error detected: Value '10001' at 'batchSize' failed to satisfy constraint: Member must have value less than or equal to 10000",
      ],
      [
        { batchingWindowSeconds: 301 },
        "1 validation error detected: Value '301' at 'maximumBatchingWindowInSeconds' failed to satisfy constraint: Member must have value less than or equal to 300",
      ],
      [
        { maxConcurrency: 1 },
        "1 validation error detected: Value '1' at 'scalingConfig.maximumConcurrency' failed to satisfy constraint: Member must have value greater than or equal to 2",
      ],
      [
        { maxConcurrency: 1001 },
        "1 validation error detected: Value '1001' at 'scalingConfig.maximumConcurrency' failed to satisfy constraint: Member must have value less than or equal to 1000",
      ],
    ];
    for (const [change, refusal] of refusals)
      expect(mappingRefusal(mapping(change)), JSON.stringify(change)).toBe(refusal);
  });
});
