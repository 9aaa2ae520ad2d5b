/** Lambda's quotas on invocations, which the local runtime and the bench hold to as Lambda does. */

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
