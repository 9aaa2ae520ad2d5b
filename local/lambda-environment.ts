/**
 * Runs a bundled function as Lambda would: each environment is a worker thread with the
 * function's environment variables, started on first use (cold start), reused while it lives,
 * killed on timeout or crash and replaced by a fresh one on the next invocation.
 */

import { randomUUID } from 'node:crypto';
import { basename, dirname, extname } from 'node:path';
import type { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { RESPONSE_PAYLOAD_BYTES } from './lambda-quotas.ts';
import { lambdaWorkerEntry } from './lambda-worker-entry.ts';
import { logGroupOf } from './logs-api.ts';
import type { LocalFunction } from './provision.ts';

/** The Lambda runtime the functions are deployed on, and the Node major the local runtime runs. */
export const LAMBDA_RUNTIME = 'nodejs24.x';

/**
 * The variables Lambda sets in each execution environment of a function (its reserved ones that
 * mean something without Lambda's runtime API), so that code reading them behaves as deployed:
 * Powertools counts a cold start only under `AWS_LAMBDA_INITIALIZATION_TYPE=on-demand`, and the
 * AWS SDK names `AWS_EXECUTION_ENV` in its user agent. One log stream per environment.
 */
export const lambdaVariables = (fn: LocalFunction, nowMs = Date.now()): Record<string, string> => ({
  AWS_EXECUTION_ENV: `AWS_Lambda_${LAMBDA_RUNTIME}`,
  AWS_LAMBDA_FUNCTION_NAME: fn.name,
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
  AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
  AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
  AWS_LAMBDA_LOG_GROUP_NAME: logGroupOf(fn.name),
  AWS_LAMBDA_LOG_STREAM_NAME: `${new Date(nowMs).toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomUUID().replaceAll('-', '')}`,
  LAMBDA_TASK_ROOT: dirname(fn.handlerFile),
  _HANDLER: `${basename(fn.handlerFile, extname(fn.handlerFile))}.${fn.handlerExport}`,
});

export type InvocationFailure = 'handled' | 'timeout' | 'crash' | 'init' | 'response-size';

/**
 * The invocation failed as a whole (the event source mapping retries the whole batch), with the
 * error type and message Lambda reports for it (`Invoke` returns them as its payload).
 */
export class InvocationError extends Error {
  override readonly name = 'InvocationError';
  readonly kind: InvocationFailure;
  readonly errorType: string;
  readonly errorMessage: string;
  /** The stack of what the handler threw, line by line; empty for the environment's failures. */
  readonly trace: readonly string[];
  constructor(
    kind: InvocationFailure,
    errorType: string,
    errorMessage: string,
    trace: readonly string[] = [],
  ) {
    super(`${errorType}: ${errorMessage}`);
    this.kind = kind;
    this.errorType = errorType;
    this.errorMessage = errorMessage;
    this.trace = trace;
  }

  /**
   * As Lambda reports it, in its answer and in its log: what the handler threw with its trace,
   * or the environment's own failure (timeout, crash, a response over the quota), which has none.
   */
  reported(): { errorType: string; errorMessage: string; trace?: readonly string[] } {
    const { errorType, errorMessage } = this;
    return this.kind === 'handled'
      ? { errorType, errorMessage, trace: this.trace }
      : { errorType, errorMessage };
  }
}

/** What Lambda answers when a response is over its quota: the runtime's post of it is refused. */
const responseTooLarge = () =>
  new InvocationError(
    'response-size',
    'Function.ResponseSizeTooLarge',
    `Response payload size exceeded maximum allowed payload size (${RESPONSE_PAYLOAD_BYTES} bytes).`,
  );

/** The response's size as Lambda counts it, in UTF-8 bytes (counted only when it could be over). */
const isTooLarge = (json: string) =>
  json.length * 3 > RESPONSE_PAYLOAD_BYTES && Buffer.byteLength(json) > RESPONSE_PAYLOAD_BYTES;

interface Pending {
  /** The worker running it: a worker replaced since (after a timeout) no longer answers it. */
  worker: Worker;
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export interface EnvironmentOptions {
  /** Variables every local environment gets on top of the function's own (endpoint, credentials…). */
  readonly baseEnvironment: Readonly<Record<string, string>>;
  /** The access key this environment signs with: the edge uses it to tell environments apart. */
  readonly accessKeyId: (generation: number) => string;
  /** Where the function's stdout/stderr goes (its log stream). */
  readonly output?: (stream: Readable) => void;
  /** Where the lines Lambda itself logs go (START, END, REPORT, an invocation's error): the same. */
  readonly platform?: (text: string) => void;
}

/**
 * The line Lambda's Node.js runtime logs when an invocation fails: what the handler threw (or
 * the environment's own failure), or the timeout.
 */
const failureLine = (requestId: string, e: InvocationError): string => {
  const at = new Date().toISOString();
  if (e.kind === 'timeout') return `${at} ${requestId} ${e.errorMessage}`;
  return `${at}\t${requestId}\tERROR\tInvoke Error \t${JSON.stringify(e.reported())}`;
};

/**
 * Lambda's REPORT line. Since August 2025 Lambda bills the init phase of on-demand environments
 * of managed runtimes, so a cold start's billed duration includes its init.
 */
const reportLine = (
  requestId: string,
  durationMs: number,
  memoryMb: number,
  initMs?: number,
): string => {
  // In whole hundredths, as printed: the billed figure is the printed ones' sum rounded up.
  const duration = Math.round(durationMs * 100);
  const init = initMs === undefined ? undefined : Math.round(initMs * 100);
  return [
    `REPORT RequestId: ${requestId}`,
    `Duration: ${(duration / 100).toFixed(2)} ms`,
    `Billed Duration: ${Math.ceil((duration + (init ?? 0)) / 100)} ms`,
    `Memory Size: ${memoryMb} MB`,
    ...(init === undefined ? [] : [`Init Duration: ${(init / 100).toFixed(2)} ms`]),
  ].join('\t');
};

export class LambdaEnvironment {
  readonly fn: LocalFunction;
  readonly #options: EnvironmentOptions;
  #worker: Worker | undefined;
  #ready: Promise<void> | undefined;
  #pending: Pending | undefined;
  #nextId = 0;
  #generation = 0;
  /** Where the running invocation's output goes too, when its caller asked for it. */
  #capture: string[] | undefined;
  /** Cold starts so far. */
  coldStarts = 0;
  /** The last cold start's init, from starting the environment to its handler being ready. */
  #initDurationMs = 0;

  constructor(fn: LocalFunction, options: EnvironmentOptions) {
    this.fn = fn;
    this.#options = options;
  }

  /** The access key of the live worker (undefined before the first cold start). */
  get accessKeyId(): string | undefined {
    return this.#worker ? this.#options.accessKeyId(this.#generation) : undefined;
  }

  #start(entry: URL): Promise<void> {
    this.#generation++;
    this.coldStarts++;
    const initStarted = performance.now();
    this.#initDurationMs = 0;
    const worker = new Worker(entry, {
      workerData: {
        handlerFile: this.fn.handlerFile,
        handlerExport: this.fn.handlerExport,
        functionName: this.fn.name,
        memoryMb: this.fn.memoryMb,
      },
      env: {
        ...this.fn.environment,
        ...this.#options.baseEnvironment,
        AWS_ACCESS_KEY_ID: this.#options.accessKeyId(this.#generation),
        ...lambdaVariables(this.fn),
      },
      stdout: true,
      stderr: true,
    });
    this.#options.output?.(worker.stdout);
    this.#options.output?.(worker.stderr);
    for (const stream of [worker.stdout, worker.stderr])
      stream.on('data', (chunk: Buffer) => this.#capture?.push(chunk.toString('utf8')));
    this.#worker = worker;
    const ready = new Promise<void>((resolve, reject) => {
      worker.on(
        'message',
        (message: {
          type: string;
          id?: number;
          ok?: boolean;
          json?: string;
          error?: { errorType: string; errorMessage: string; stack: string };
        }) => {
          if (message.type === 'ready') {
            this.#initDurationMs = performance.now() - initStarted;
            resolve();
          } else if (message.type === 'init-error') {
            reject(
              new InvocationError(
                'init',
                message.error?.errorType ?? 'Runtime.Unknown',
                message.error?.errorMessage ?? '',
              ),
            );
            void worker.terminate();
          } else if (message.type === 'result' && this.#pending?.worker === worker) {
            const pending = this.#pending;
            this.#pending = undefined;
            clearTimeout(pending.timer);
            const json = message.json ?? 'null';
            if (message.ok && isTooLarge(json)) pending.reject(responseTooLarge());
            else if (message.ok) pending.resolve(JSON.parse(json));
            else
              pending.reject(
                new InvocationError(
                  'handled',
                  message.error?.errorType ?? 'Error',
                  message.error?.errorMessage ?? '',
                  (message.error?.stack ?? '').split('\n'),
                ),
              );
          }
        },
      );
      worker.on('error', (error) => reject(new InvocationError('init', error.name, error.message)));
      worker.on('exit', () => {
        this.#detach(worker);
        reject(
          new InvocationError('crash', 'Runtime.ExitError', 'the environment exited during init'),
        );
        const pending = this.#pending;
        if (pending?.worker === worker) {
          this.#pending = undefined;
          clearTimeout(pending.timer);
          pending.reject(
            new InvocationError(
              'crash',
              'Runtime.ExitError',
              'the environment exited during the invocation',
            ),
          );
        }
      });
    });
    ready.catch(() => {});
    return ready;
  }

  /**
   * Runs one invocation; resolves with the handler's JSON response or rejects with
   * InvocationError. Its log gets Lambda's own lines around what the function writes: START,
   * the failure if it fails, END and REPORT (with the init duration on a cold start). With `log`,
   * all of it is appended there too (Lambda's log tail).
   */
  async invoke(event: unknown, log?: string[], requestId: string = randomUUID()): Promise<unknown> {
    if (this.#pending)
      throw new Error(`${this.fn.name}: an environment runs one invocation at a time`);
    this.#capture = log;
    const cold = this.#ready === undefined;
    const started = performance.now();
    this.#platform(`START RequestId: ${requestId} Version: $LATEST`);
    let failure: unknown;
    try {
      return await this.#invoke(event, requestId);
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      // The worker answers once its output has arrived (see lambda-worker.ts), so these lines
      // close the invocation's log.
      if (failure instanceof InvocationError) this.#platform(failureLine(requestId, failure));
      const initMs = cold && this.#initDurationMs > 0 ? this.#initDurationMs : undefined;
      this.#platform(`END RequestId: ${requestId}`);
      this.#platform(
        reportLine(
          requestId,
          performance.now() - started - (initMs ?? 0),
          this.fn.memoryMb,
          initMs,
        ),
      );
      this.#capture = undefined;
    }
  }

  /** A line of Lambda's own in the function's log (and the tail being captured). */
  #platform(line: string): void {
    this.#capture?.push(`${line}\n`);
    this.#options.platform?.(`${line}\n`);
  }

  async #invoke(event: unknown, requestId: string): Promise<unknown> {
    this.#ready ??= lambdaWorkerEntry().then((entry) => this.#start(entry));
    await this.#ready;
    const worker = this.#worker;
    if (!worker) throw new InvocationError('crash', 'Runtime.ExitError', 'the environment is gone');
    const timeoutMs = this.fn.timeoutSeconds * 1000;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending = undefined;
        // Lambda replaces an environment that timed out: the next invocation starts a fresh one
        // at once, not the one still being torn down.
        this.#detach(worker);
        reject(
          new InvocationError(
            'timeout',
            'Sandbox.Timedout',
            `Task timed out after ${this.fn.timeoutSeconds}.00 seconds`,
          ),
        );
        void worker.terminate();
      }, timeoutMs);
      this.#pending = { worker, resolve, reject, timer };
      worker.postMessage({ id: this.#nextId++, event, timeoutMs, requestId });
    });
  }

  /** Forgets `worker` if it is still the live one. */
  #detach(worker: Worker): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    this.#ready = undefined;
  }

  /** Kills the environment mid-flight, as a crash would (the next invocation cold-starts). */
  async crash(): Promise<void> {
    await this.#worker?.terminate();
  }

  async dispose(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }
}
