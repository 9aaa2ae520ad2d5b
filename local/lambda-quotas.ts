/**
 * Lambda's quotas and rules on functions and invocations, which the local runtime and the bench
 * hold to as Lambda does.
 */

/**
 * A synchronous invocation's payload, 6 MB: what `Invoke` takes, and the most an event source
 * mapping puts in one event (it invokes once the payload reaches it, whatever the batch size, so
 * ten messages at SQS's 1 MiB maximum reach the function over two or more invocations).
 */
export const INVOKE_PAYLOAD_BYTES = 6 * 1024 * 1024;

/**
 * A synchronous invocation's response: 6 MB as documented, refused above 6,291,556 bytes (the
 * figure Lambda's `Function.ResponseSizeTooLarge` error names).
 */
export const RESPONSE_PAYLOAD_BYTES = 6 * 1024 * 1024 + 100;

/** An asynchronous invocation's payload (`InvocationType: Event`), 1 MB since October 2025. */
export const ASYNC_INVOKE_PAYLOAD_BYTES = 1024 * 1024;

/** The longest a function may run: a 15-minute timeout. */
export const LAMBDA_MAX_TIMEOUT_MS = 900_000;

/**
 * A function's environment variables: 4 KB in all. Lambda measures the variables as one compact
 * JSON object (its refusal quotes that string as "String measured"), in UTF-8 bytes.
 */
export const ENVIRONMENT_BYTES = 4096;

/** Set by Lambda itself: a function configuration that sets one is refused. */
export const RESERVED_ENVIRONMENT_KEYS: ReadonlySet<string> = new Set([
  '_HANDLER',
  '_X_AMZN_TRACE_ID',
  'AWS_ACCESS_KEY',
  'AWS_ACCESS_KEY_ID',
  'AWS_DEFAULT_REGION',
  'AWS_EXECUTION_ENV',
  'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
  'AWS_LAMBDA_FUNCTION_NAME',
  'AWS_LAMBDA_FUNCTION_VERSION',
  'AWS_LAMBDA_INITIALIZATION_TYPE',
  'AWS_LAMBDA_LOG_GROUP_NAME',
  'AWS_LAMBDA_LOG_STREAM_NAME',
  'AWS_LAMBDA_RUNTIME_API',
  'AWS_REGION',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'LAMBDA_RUNTIME_DIR',
  'LAMBDA_TASK_ROOT',
]);

/** The pattern of `CreateFunction`'s environment variable names. */
const ENVIRONMENT_KEY = /^[a-zA-Z][a-zA-Z0-9_]+$/;

/** The environment's size as Lambda measures it against {@link ENVIRONMENT_BYTES}. */
export const environmentBytes = (variables: Readonly<Record<string, string>>): number =>
  Buffer.byteLength(JSON.stringify(variables), 'utf8');

/**
 * Why Lambda would refuse to create a function with these variables, in its own words, or
 * undefined when it would accept them.
 */
export const environmentRefusal = (
  variables: Readonly<Record<string, string>>,
): string | undefined => {
  const badName = Object.keys(variables).find((key) => !ENVIRONMENT_KEY.test(key));
  if (badName !== undefined) {
    return `environment variable name ${JSON.stringify(badName)} must satisfy the pattern ${ENVIRONMENT_KEY.source}`;
  }
  const reserved = Object.keys(variables)
    .filter((key) => RESERVED_ENVIRONMENT_KEYS.has(key))
    .sort();
  if (reserved.length > 0) {
    return (
      'Lambda was unable to configure your environment variables because the environment variables ' +
      'you have provided contains reserved keys that are currently not supported for modification. ' +
      `Reserved keys used in this request: ${reserved.join(', ')}`
    );
  }
  const bytes = environmentBytes(variables);
  if (bytes > ENVIRONMENT_BYTES) {
    return (
      'Lambda was unable to configure your environment variables because the environment variables ' +
      `you have provided exceeded the 4KB limit (${bytes} bytes measured, ${ENVIRONMENT_BYTES} allowed)`
    );
  }
  return undefined;
};

/** What an SQS event source mapping is checked against, as `CreateEventSourceMapping` checks it. */
export interface MappingCheck {
  readonly batchSize: number;
  readonly batchingWindowSeconds: number;
  readonly maxConcurrency: number | undefined;
  /** The queue's `VisibilityTimeout` (seconds) and whether it is FIFO. */
  readonly queue: { readonly visibilityTimeoutSeconds: number; readonly fifo: boolean };
  readonly functionTimeoutSeconds: number;
}

/** AWS's wording for a parameter outside its range (a `ValidationException`'s message). */
const outOfRange = (value: number, field: string, bound: 'greater' | 'less', limit: number) =>
  `1 validation error detected: Value '${value}' at '${field}' failed to satisfy constraint: Member must have value ${bound} than or equal to ${limit}`;

/**
 * Why Lambda would refuse to create this SQS event source mapping, in its own words, or undefined
 * when it would create it. The commonest is a queue whose visibility timeout is shorter than the
 * function's timeout: a message could come back while its invocation still runs.
 */
export const mappingRefusal = (m: MappingCheck): string | undefined => {
  if (m.batchSize < 1) return outOfRange(m.batchSize, 'batchSize', 'greater', 1);
  if (m.batchSize > 10_000) return outOfRange(m.batchSize, 'batchSize', 'less', 10_000);
  if (m.batchingWindowSeconds > 300)
    return outOfRange(m.batchingWindowSeconds, 'maximumBatchingWindowInSeconds', 'less', 300);
  if (m.maxConcurrency !== undefined && m.maxConcurrency < 2)
    return outOfRange(m.maxConcurrency, 'scalingConfig.maximumConcurrency', 'greater', 2);
  if (m.maxConcurrency !== undefined && m.maxConcurrency > 1000)
    return outOfRange(m.maxConcurrency, 'scalingConfig.maximumConcurrency', 'less', 1000);
  if (m.queue.fifo && m.batchSize > 10)
    return `Maximum batch size for a FIFO queue is 10 (given ${m.batchSize})`;
  if (m.queue.fifo && m.batchingWindowSeconds > 0)
    return 'Batching window is not supported for FIFO queues';
  if (!m.queue.fifo && m.batchSize > 10 && m.batchingWindowSeconds === 0)
    return 'Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10';
  if (m.queue.visibilityTimeoutSeconds < m.functionTimeoutSeconds)
    return `Queue visibility timeout: ${m.queue.visibilityTimeoutSeconds} seconds is less than Function timeout: ${m.functionTimeoutSeconds} seconds`;
  return undefined;
};

/**
 * A default account's concurrency: 1,000 executions at once, of which at least 100 stay
 * unreserved (Lambda refuses a reservation that would leave fewer).
 */
export const ACCOUNT_CONCURRENCY = 1000;
export const UNRESERVED_MINIMUM = 100;

/**
 * Why Lambda would refuse to reserve `value` concurrent executions for a function while the
 * account's other functions reserve `reservedByOthers` in all (`PutFunctionConcurrency`, or
 * CloudFormation's `ReservedConcurrentExecutions`): its error code and message, in its own
 * words; undefined when it would reserve them.
 */
export const reservationRefusal = (
  value: number,
  reservedByOthers: number,
): { code: string; message: string } | undefined => {
  if (!Number.isInteger(value) || value < 0)
    return {
      code: 'ValidationException',
      message: outOfRange(value, 'reservedConcurrentExecutions', 'greater', 0),
    };
  if (ACCOUNT_CONCURRENCY - reservedByOthers - value < UNRESERVED_MINIMUM)
    return {
      code: 'InvalidParameterValueException',
      message: `Specified ReservedConcurrentExecutions for function decreases account's UnreservedConcurrentExecution below its minimum value of [${UNRESERVED_MINIMUM}].`,
    };
  return undefined;
};
