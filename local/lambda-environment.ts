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
}

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
  /** Cold starts so far, and the last one's module init time. */
  coldStarts = 0;
  lastInitMs = 0;

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
          initMs?: number;
        }) => {
          if (message.type === 'ready') {
            this.lastInitMs = message.initMs ?? 0;
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
   * InvocationError. With `log`, what the function writes during the invocation is appended to it.
   */
  async invoke(event: unknown, log?: string[], requestId: string = randomUUID()): Promise<unknown> {
    if (this.#pending)
      throw new Error(`${this.fn.name}: an environment runs one invocation at a time`);
    this.#capture = log;
    try {
      return await this.#invoke(event, requestId);
    } finally {
      // A worker's output crosses to this thread apart from its result: let what it wrote
      // before answering arrive.
      if (log) for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
      this.#capture = undefined;
    }
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
