/** Recognising the AWS errors the adapters turn into outcomes. Everything else propagates. */

interface ServiceErrorLike {
  readonly name?: unknown;
  readonly $metadata?: { readonly httpStatusCode?: unknown };
}

const asServiceError = (error: unknown): ServiceErrorLike | undefined =>
  typeof error === 'object' && error !== null ? (error as ServiceErrorLike) : undefined;

export const errorName = (error: unknown): string | undefined => {
  const name = asServiceError(error)?.name;
  return typeof name === 'string' ? name : undefined;
};

export const httpStatus = (error: unknown): number | undefined => {
  const status = asServiceError(error)?.$metadata?.httpStatusCode;
  return typeof status === 'number' ? status : undefined;
};

/** S3 refused a conditional write because the object is not as the condition required (412). */
export const isPreconditionFailed = (error: unknown): boolean =>
  httpStatus(error) === 412 || errorName(error) === 'PreconditionFailed';

/**
 * S3 refused a conditional write because another conditional write to the key is in flight
 * (409 ConditionalRequestConflict). It says nothing about the object: that other write may
 * never finish.
 */
export const isConditionalConflict = (error: unknown): boolean =>
  httpStatus(error) === 409 || errorName(error) === 'ConditionalRequestConflict';

/** Either way, a compare-and-swap lost its race and must read again before it writes. */
export const isPreconditionLost = (error: unknown): boolean =>
  isPreconditionFailed(error) || isConditionalConflict(error);

export const isNotFound = (error: unknown): boolean =>
  httpStatus(error) === 404 || errorName(error) === 'NoSuchKey' || errorName(error) === 'NotFound';
