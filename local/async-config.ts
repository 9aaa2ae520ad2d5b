/**
 * How Lambda handles a function's asynchronous invocations, as its template configures it: the
 * `$LATEST` event invoke config (retries, maximum event age, on-success and on-failure
 * destinations) and the function's dead-letter queue; and the invocation record Lambda sends a
 * destination.
 */
import { asRecord, type ResourceEntries, referencesOf } from './template.ts';

/** How Lambda retries a function's asynchronous invocations, and where it reports them. */
export interface AsyncInvokeConfig {
  /** Retries of an invocation whose function failed: 0–2, Lambda's default 2. */
  readonly maximumRetryAttempts: number;
  /** An event older than this is dropped, not retried: 60–21,600 s, Lambda's default 21,600. */
  readonly maximumEventAgeSeconds: number;
  /** Where an invocation record goes after a success (an ARN: a queue, a function…). */
  readonly onSuccess?: string;
  /** Where an invocation record goes once the event is discarded. */
  readonly onFailure?: string;
}

export const LAMBDA_ASYNC_DEFAULTS: AsyncInvokeConfig = {
  maximumRetryAttempts: 2,
  maximumEventAgeSeconds: 21_600,
};

/** Each function's `$LATEST` event invoke config, by the function's logical id. */
export const asyncInvokeConfigs = (
  resources: ResourceEntries,
  functionIds: readonly string[],
  resolveValue: (value: unknown) => unknown = (value) => value,
) => {
  const configs = new Map<string, AsyncInvokeConfig>();
  for (const [, resource] of resources.filter(
    ([, r]) => r.Type === 'AWS::Lambda::EventInvokeConfig',
  )) {
    const p = asRecord(resource.Properties);
    const fn = referencesOf(p.FunctionName).find((r) => functionIds.includes(r));
    if (!fn || (p.Qualifier !== undefined && p.Qualifier !== '$LATEST')) continue;
    const destinations = asRecord(p.DestinationConfig);
    const destination = (which: 'OnSuccess' | 'OnFailure') => {
      const arn = asRecord(destinations[which]).Destination;
      return arn === undefined ? undefined : String(resolveValue(arn));
    };
    const onSuccess = destination('OnSuccess');
    const onFailure = destination('OnFailure');
    configs.set(fn, {
      maximumRetryAttempts: Number(
        p.MaximumRetryAttempts ?? LAMBDA_ASYNC_DEFAULTS.maximumRetryAttempts,
      ),
      maximumEventAgeSeconds: Number(
        p.MaximumEventAgeInSeconds ?? LAMBDA_ASYNC_DEFAULTS.maximumEventAgeSeconds,
      ),
      ...(onSuccess === undefined ? {} : { onSuccess }),
      ...(onFailure === undefined ? {} : { onFailure }),
    });
  }
  return configs;
};

/** Why Lambda reports an asynchronous invocation to a destination. */
export type RecordCondition = 'Success' | 'RetriesExhausted' | 'EventAgeExceeded';

/** The invocation record Lambda sends a destination, in its documented shape. */
export const invocationRecord = (o: {
  readonly requestId: string;
  readonly functionArn: string;
  readonly condition: RecordCondition;
  readonly attempts: number;
  readonly event: unknown;
  /** The function's result, or the error it reported (`errorType`, `errorMessage`, `trace`). */
  readonly response: unknown;
  readonly failed: boolean;
}) => ({
  version: '1.0',
  timestamp: new Date().toISOString(),
  requestContext: {
    requestId: o.requestId,
    functionArn: `${o.functionArn}:$LATEST`,
    condition: o.condition,
    approximateInvokeCount: o.attempts,
  },
  requestPayload: o.event,
  responseContext: {
    statusCode: 200,
    executedVersion: '$LATEST',
    ...(o.failed ? { functionError: 'Unhandled' } : {}),
  },
  responsePayload: o.response,
});
