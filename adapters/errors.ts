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

/** S3 refused a conditional write: the object changed (412) or a racing write is in flight (409). */
export const isPreconditionLost = (error: unknown): boolean => {
  const status = httpStatus(error);
  return status === 412 || status === 409 || errorName(error) === 'PreconditionFailed';
};

export const isNotFound = (error: unknown): boolean =>
  httpStatus(error) === 404 || errorName(error) === 'NoSuchKey' || errorName(error) === 'NotFound';
