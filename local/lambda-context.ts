import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

/** What an invocation's context names; each defaults to a value of its own. */
export interface ContextIds {
  readonly awsRequestId?: string | undefined;
  readonly logGroupName?: string | undefined;
  readonly logStreamName?: string | undefined;
  readonly region?: string | undefined;
}

/** A Lambda-like context: remaining time counts down from the function's timeout. */
export const lambdaContext = (
  functionName: string,
  timeoutMs: number,
  memoryMb = 256,
  ids: ContextIds = {},
): Context => {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${ids.region ?? 'us-east-1'}:000000000000:function:${functionName}`,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: ids.awsRequestId ?? randomUUID(),
    logGroupName: ids.logGroupName ?? `/aws/lambda/${functionName}`,
    logStreamName: ids.logStreamName ?? `local/${randomUUID()}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
};
