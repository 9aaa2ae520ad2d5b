/**
 * Lambda's control and invoke API (REST, `/2015-03-31/functions/…`) answered by the edge from the
 * local runtime's own environments, so `aws lambda invoke`, `list-functions` and the SDKs'
 * Lambda clients work as they do on AWS: `Invoke` (RequestResponse, Event, DryRun; an error
 * thrown by the handler comes back as `X-Amz-Function-Error: Unhandled` with its type and
 * message), `ListFunctions`, `GetFunction`, `GetFunctionConfiguration`,
 * `UpdateFunctionConfiguration` (environment and timeout: `lambda-configuration.ts`), the event source
 * mappings (`lambda-mappings-api.ts`), and a function's reserved concurrency: `PutFunctionConcurrency`, `GetFunctionConcurrency`, `DeleteFunctionConcurrency`
 * (an invocation beyond it is throttled: `TooManyRequestsException`, 429), and
 * `GetAccountSettings` (the unreserved concurrency they leave). Any other Lambda action is
 * answered with an error naming it.
 */

import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RulesBackend } from './events-api.ts';
import { readBody } from './http.ts';
import { type ConfigurationChange, configurationChange } from './lambda-configuration.ts';
import { InvocationError, LAMBDA_RUNTIME } from './lambda-environment.ts';
import { answerMappings, type LocalMapping, type MappingControl } from './lambda-mappings-api.ts';
import {
  ACCOUNT_CONCURRENCY,
  ASYNC_INVOKE_PAYLOAD_BYTES,
  INVOKE_PAYLOAD_BYTES,
  reservationRefusal,
} from './lambda-quotas.ts';
import { error, json, notJson, parseJson } from './lambda-rest.ts';
import { logGroupOf } from './logs-api.ts';
import type { LocalFunction } from './provision.ts';
import type { SchedulerBackend } from './scheduler-api.ts';
import { asRecord } from './template.ts';
import { ThrottledError } from './throttling.ts';

const ACCOUNT = '000000000000';

/** What a running stack lends the edge: its functions, mappings and rules, and a way to invoke. */
export interface LambdaBackend {
  readonly region: string;
  readonly functions: readonly LocalFunction[];
  readonly mappings: readonly LocalMapping[];
  /** Creates and deletes mappings of the stack's functions and queues. */
  readonly mappingControl?: MappingControl;
  /**
   * Runs the function; with `log`, what it writes meanwhile is appended there; with `requestId`,
   * its context's `awsRequestId` is that one (the id of the log tail's START and REPORT lines).
   */
  invoke(name: string, event: unknown, log?: string[], requestId?: string): Promise<unknown>;
  /** Queues an asynchronous invocation (`Event`): run now, retried as Lambda retries it. */
  invokeAsync(name: string, event: unknown): void;
  /** The function's reserved concurrency now; undefined when none is reserved. */
  reservedConcurrency(name: string): number | undefined;
  /** Reserves concurrency for the function, or with undefined removes its reservation. */
  setReservedConcurrency(name: string, value: number | undefined): void;
  /** Runs the function with this configuration from its next invocation on. */
  updateConfiguration(name: string, change: ConfigurationChange): LocalFunction;
  /** The stack's scheduled rules, for EventBridge's API on the edge. */
  readonly rules?: RulesBackend;
  /** The stack's EventBridge Scheduler schedules, for Scheduler's API on the edge. */
  readonly scheduler?: SchedulerBackend;
  /** The file the function's log is written to, when the runtime keeps one. */
  logFile?(name: string): string | undefined;
}

/**
 * Lambda's API paths: most under 2015-03-31, the event invoke configs under 2019-09-25, reserved
 * concurrency under 2017-10-31 (set, removed) and 2019-09-30 (read), account settings under
 * 2016-08-19.
 */
export const isLambdaRequest = (req: IncomingMessage) =>
  /^\/(2015-03-31|2016-08-19|2017-10-31|2019-09-25|2019-09-30)\//.test(req.url ?? '');

const configurationOf = (fn: LocalFunction) => ({
  FunctionName: fn.name,
  FunctionArn: fn.arn,
  Runtime: LAMBDA_RUNTIME,
  Handler: `index.${fn.handlerExport}`,
  MemorySize: fn.memoryMb,
  Timeout: fn.timeoutSeconds,
  Environment: { Variables: { ...fn.environment } },
  PackageType: 'Zip',
  CodeSha256: fn.codeSha256,
  // Lambda's own form of the time: milliseconds and a +0000 offset.
  LastModified: fn.lastModified.replace('Z', '+0000'),
  Architectures: ['arm64'],
  State: 'Active',
  LastUpdateStatus: 'Successful',
  // Lambda's default group, which the edge's CloudWatch Logs serves from the runtime's files.
  LoggingConfig: { LogFormat: 'Text', LogGroup: logGroupOf(fn.name) },
});

/** A function by name, full ARN or partial ARN (`function:name`), as Lambda resolves it. */
const find = (backends: readonly LambdaBackend[], id: string) => {
  const name = decodeURIComponent(id).split(':').pop() ?? '';
  for (const backend of backends) {
    const fn = backend.functions.find((f) => f.name === name);
    if (fn) return { backend, fn };
  }
  return undefined;
};

/**
 * Lambda's log tail: the last 4 KB of the invocation's log, from its START line to its REPORT
 * line (the environment writes both), base64-encoded (the `X-Amz-Log-Result` header).
 */
export const logTail = (log: readonly string[]) => {
  const bytes = Buffer.from(log.join(''), 'utf8');
  return bytes.subarray(Math.max(0, bytes.length - 4096)).toString('base64');
};

/** What the handler threw, in the shape Lambda's Node.js runtime reports it. */
const unhandled = (thrown: unknown) => {
  if (thrown instanceof InvocationError) return thrown.reported();
  const e = thrown instanceof Error ? thrown : new Error(String(thrown));
  return { errorType: e.name, errorMessage: e.message, trace: (e.stack ?? '').split('\n') };
};

/** The account's reservations: every function the edge serves, as one account. */
const reservedIn = (backends: readonly LambdaBackend[]) =>
  backends
    .flatMap((b) => b.functions.map((f) => b.reservedConcurrency(f.name) ?? 0))
    .reduce((a, b) => a + b, 0);

/**
 * GetAccountSettings: a default account's limits (Lambda's quotas for code size, 1,000
 * concurrent executions) and what the edge's functions use of them, the unreserved concurrency
 * after their reservations included.
 */
const accountSettings = (backends: readonly LambdaBackend[]) => {
  const functions = backends.flatMap((b) => b.functions);
  return {
    AccountLimit: {
      TotalCodeSize: 80_530_636_800,
      CodeSizeUnzipped: 262_144_000,
      CodeSizeZipped: 52_428_800,
      ConcurrentExecutions: ACCOUNT_CONCURRENCY,
      UnreservedConcurrentExecutions: ACCOUNT_CONCURRENCY - reservedIn(backends),
    },
    AccountUsage: {
      TotalCodeSize: functions.reduce((sum, f) => sum + statSync(f.handlerFile).size, 0),
      FunctionCount: functions.length,
    },
  };
};

/** PutFunctionConcurrency, GetFunctionConcurrency, DeleteFunctionConcurrency. */
const answerConcurrency = (
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
  backends: readonly LambdaBackend[],
  { backend, fn }: { backend: LambdaBackend; fn: LocalFunction },
) => {
  if (req.method === 'DELETE') {
    backend.setReservedConcurrency(fn.name, undefined);
    res.writeHead(204);
    return void res.end();
  }
  if (req.method === 'PUT') {
    const parsed = parseJson(body, {});
    if (!parsed) return notJson(res);
    const value = asRecord(parsed.value).ReservedConcurrentExecutions;
    if (typeof value !== 'number')
      return error(
        res,
        400,
        'ValidationException',
        "1 validation error detected: Value null at 'reservedConcurrentExecutions' failed to satisfy constraint: Member must not be null",
      );
    const others = reservedIn(backends) - (backend.reservedConcurrency(fn.name) ?? 0);
    const refusal = reservationRefusal(value, others);
    if (refusal) return error(res, 400, refusal.code, refusal.message);
    backend.setReservedConcurrency(fn.name, value);
    return json(res, 200, { ReservedConcurrentExecutions: value });
  }
  const reserved = backend.reservedConcurrency(fn.name);
  return json(res, 200, reserved === undefined ? {} : { ReservedConcurrentExecutions: reserved });
};

export const answerLambda = async (
  req: IncomingMessage,
  res: ServerResponse,
  backends: readonly LambdaBackend[],
  region: string,
): Promise<void> => {
  const url = new URL(req.url ?? '/', 'http://edge');
  const parts = url.pathname.split('/').filter(Boolean); // 2015-03-31, functions, name, …
  const [, collection, id, sub] = parts;
  if (collection === 'event-source-mappings') {
    return answerMappings(req, res, url, backends, id);
  }
  if (collection === 'account-settings' && req.method === 'GET') {
    await readBody(req);
    return json(res, 200, accountSettings(backends));
  }
  if (collection !== 'functions') {
    await readBody(req);
    return error(
      res,
      400,
      'InvalidRequestContentException',
      `the local edge does not serve ${req.method} ${url.pathname} of Lambda's API`,
    );
  }
  if (id === undefined && req.method === 'GET') {
    const Functions = backends.flatMap((b) => b.functions.map(configurationOf));
    return json(res, 200, { Functions });
  }
  const found = id === undefined ? undefined : find(backends, id);
  const payload = await readBody(req);
  if (!found) {
    return error(
      res,
      404,
      'ResourceNotFoundException',
      `Function not found: arn:aws:lambda:${region}:${ACCOUNT}:function:${decodeURIComponent(id ?? '')}`,
    );
  }
  const { backend, fn } = found;
  const configuration = configurationOf(fn);
  const reserved = backend.reservedConcurrency(fn.name);
  const concurrency = reserved === undefined ? {} : { ReservedConcurrentExecutions: reserved };
  if (req.method === 'GET' && sub === undefined) {
    return json(res, 200, {
      Configuration: configuration,
      Code: { RepositoryType: 'S3' },
      ...(reserved === undefined ? {} : { Concurrency: concurrency }),
    });
  }
  if (sub === 'concurrency') return answerConcurrency(req, res, payload, backends, found);
  if (req.method === 'GET' && sub === 'configuration') return json(res, 200, configuration);
  if (req.method === 'PUT' && sub === 'configuration') {
    const change = configurationChange(res, payload);
    if (change) json(res, 200, configurationOf(backend.updateConfiguration(fn.name, change)));
    return;
  }
  if (req.method === 'GET' && sub === 'event-invoke-config') {
    // The template's AWS::Lambda::EventInvokeConfig of $LATEST, as GetFunctionEventInvokeConfig.
    const qualifier = url.searchParams.get('Qualifier') ?? '$LATEST';
    const arn = `${fn.arn}:${qualifier}`;
    if (qualifier !== '$LATEST' || !fn.asyncInvoke)
      return error(
        res,
        404,
        'ResourceNotFoundException',
        `The function ${arn} doesn't have an EventInvokeConfig`,
      );
    return json(res, 200, {
      LastModified: Date.parse(fn.lastModified) / 1000,
      FunctionArn: arn,
      MaximumRetryAttempts: fn.asyncInvoke.maximumRetryAttempts,
      MaximumEventAgeInSeconds: fn.asyncInvoke.maximumEventAgeSeconds,
      DestinationConfig: { OnSuccess: {}, OnFailure: {} },
    });
  }
  if (req.method === 'POST' && sub === 'invocations') {
    const type = String(req.headers['x-amz-invocation-type'] ?? 'RequestResponse');
    const limit = type === 'Event' ? ASYNC_INVOKE_PAYLOAD_BYTES : INVOKE_PAYLOAD_BYTES;
    if (Buffer.byteLength(payload) > limit)
      return error(
        res,
        413,
        'RequestTooLargeException',
        `Request must be smaller than ${limit} bytes for the ${type === 'Event' ? 'InvokeAsync' : 'InvokeFunction'} operation`,
      );
    const parsed = parseJson(payload, {});
    if (!parsed) return notJson(res);
    const event = parsed.value;
    const version = { 'x-amz-executed-version': '$LATEST' };
    if (type === 'DryRun') return json(res, 204, {}, version);
    if (type === 'Event') {
      // Accepted now and run in the background, a failure retried as the function's event
      // invoke config allows; what it throws is in its log.
      backend.invokeAsync(fn.name, event);
      res.writeHead(202, { ...version, 'x-amzn-requestid': randomUUID() });
      return void res.end();
    }
    const tail = String(req.headers['x-amz-log-type'] ?? 'None') === 'Tail';
    const log: string[] = [];
    const requestId = randomUUID();
    const logResult = () => (tail ? { 'x-amz-log-result': logTail(log) } : {});
    try {
      const result = await backend.invoke(fn.name, event, tail ? log : undefined, requestId);
      return json(res, 200, result ?? null, {
        ...version,
        'x-amzn-requestid': requestId,
        ...logResult(),
      });
    } catch (thrown) {
      // Refused before it ran: no function error, Lambda's throttle, which SDKs retry.
      if (thrown instanceof ThrottledError)
        return json(
          res,
          429,
          { Reason: thrown.reason, Type: 'User', message: thrown.message },
          { 'x-amzn-errortype': 'TooManyRequestsException', 'x-amzn-requestid': requestId },
        );
      return json(res, 200, unhandled(thrown), {
        ...version,
        'x-amzn-requestid': requestId,
        'x-amz-function-error': 'Unhandled',
        ...logResult(),
      });
    }
  }
  return error(
    res,
    400,
    'InvalidRequestContentException',
    `the local edge does not serve ${req.method} ${url.pathname} of Lambda's API`,
  );
};
