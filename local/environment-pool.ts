/**
 * A running stack's functions and their execution environments, pooled as Lambda pools them:
 * one pool per function, whatever invokes it. An invocation takes the idle environment used
 * last, and a new one starts only when none is idle, so a trickle of messages keeps one
 * environment warm instead of cold-starting one per poller slot (ten at once for the ingest
 * function, all on the laptop's cores). A function's code and settings can be replaced while
 * it runs, as `UpdateFunctionCode` replaces them: environments of the old code finish what they
 * run and are shut down, and later invocations start fresh ones.
 *
 * The pool is also where a function's reserved concurrency holds: the template's
 * `ReservedConcurrentExecutions`, or what `PutFunctionConcurrency` set since. An invocation
 * beyond it is throttled before any environment is taken.
 */
import type { LambdaEnvironment } from './lambda-environment.ts';
import type { Datum } from './metrics.ts';
import type { LocalFunction } from './provision.ts';
import { ThrottledError } from './throttling.ts';

export class EnvironmentPool {
  #functions: readonly LocalFunction[];
  readonly #create: (fn: LocalFunction) => LambdaEnvironment;
  readonly #idle = new Map<string, LambdaEnvironment[]>();
  /** Invocations running now, by function. */
  readonly #busy = new Map<string, number>();
  /** Reserved concurrency by function; absent: none (the account's unreserved pool). */
  readonly #reserved = new Map<string, number>();
  /** Invocations throttled so far, by function (Lambda's `Throttles` metric). */
  readonly throttles = new Map<string, number>();
  /** Every live environment, busy or idle. */
  readonly environments: LambdaEnvironment[] = [];

  readonly #publish: (datum: Datum) => void;

  constructor(
    functions: readonly LocalFunction[],
    /** Starts an environment of a function (cold, on its first invocation). */
    create: (fn: LocalFunction) => LambdaEnvironment,
    /** Where Lambda's metrics of each invocation go (`AWS/Lambda`, by `FunctionName`). */
    publish: (datum: Datum) => void = () => {},
  ) {
    this.#functions = functions;
    this.#create = create;
    this.#publish = publish;
    for (const fn of functions) this.#reserve(fn);
  }

  #reserve(fn: LocalFunction): void {
    this.setReservedConcurrency(fn.logicalId, fn.reservedConcurrency);
  }

  /** The function's reserved concurrency now; undefined when it has none. */
  reservedConcurrency(logicalId: string): number | undefined {
    return this.#reserved.get(logicalId);
  }

  /**
   * Reserves concurrency for the function, or with undefined removes its reservation, as
   * `PutFunctionConcurrency` and `DeleteFunctionConcurrency` do. Invocations already running
   * finish; the limit holds for the next ones.
   */
  setReservedConcurrency(logicalId: string, value: number | undefined): void {
    if (value === undefined) this.#reserved.delete(logicalId);
    else this.#reserved.set(logicalId, value);
  }

  /** The functions as they run now. */
  get functions(): readonly LocalFunction[] {
    return this.#functions;
  }

  #current(logicalId: string): LocalFunction {
    const fn = this.#functions.find((f) => f.logicalId === logicalId);
    if (!fn) throw new Error(`no function ${logicalId}`);
    return fn;
  }

  /** Shuts down an environment of code no longer current, and forgets it. */
  #retire(env: LambdaEnvironment): void {
    const at = this.environments.indexOf(env);
    if (at >= 0) this.environments.splice(at, 1);
    void env.dispose();
  }

  #metric(fn: LocalFunction, name: string, value: number, unit: string): void {
    this.#publish({
      namespace: 'AWS/Lambda',
      name,
      dimensions: { FunctionName: fn.name },
      timestampMs: Date.now(),
      value,
      unit,
    });
  }

  /**
   * Runs `work` in an idle environment of the function, or a new one, and publishes Lambda's
   * metrics of it: `Invocations`, `Duration`, and `Errors` when it fails as a whole (or
   * `Throttles`, when it is refused).
   */
  async run<T>(logicalId: string, work: (env: LambdaEnvironment) => Promise<T>): Promise<T> {
    const fn = this.#current(logicalId);
    const busy = this.#busy.get(logicalId) ?? 0;
    const reserved = this.#reserved.get(logicalId);
    if (reserved !== undefined && busy >= reserved) {
      this.throttles.set(logicalId, (this.throttles.get(logicalId) ?? 0) + 1);
      this.#metric(fn, 'Throttles', 1, 'Count');
      throw new ThrottledError(fn.name, reserved);
    }
    this.#busy.set(logicalId, busy + 1);
    let env = this.#idle.get(logicalId)?.pop();
    if (!env) {
      env = this.#create(fn);
      this.environments.push(env);
    }
    const startedMs = performance.now();
    let failed = true;
    try {
      const result = await work(env);
      failed = false;
      return result;
    } finally {
      this.#metric(fn, 'Invocations', 1, 'Count');
      this.#metric(fn, 'Duration', performance.now() - startedMs, 'Milliseconds');
      if (failed) this.#metric(fn, 'Errors', 1, 'Count');
      this.#busy.set(logicalId, (this.#busy.get(logicalId) ?? 1) - 1);
      // One that ran code updated meanwhile is not reused: the next invocation gets the new.
      if (env.fn !== this.#current(logicalId)) this.#retire(env);
      else {
        const idle = this.#idle.get(logicalId) ?? [];
        idle.push(env);
        this.#idle.set(logicalId, idle);
      }
    }
  }

  /**
   * Replaces these functions' code and settings (by logical id): their idle environments are
   * shut down now, their busy ones once their invocation ends.
   */
  update(updated: readonly LocalFunction[]): void {
    const byId = new Map(updated.map((fn) => [fn.logicalId, fn]));
    for (const fn of updated) {
      // A redeploy sets what the template says when that changed; otherwise a reservation made
      // through the API since stays, as CloudFormation leaves a property it did not change.
      if (fn.reservedConcurrency !== this.#current(fn.logicalId).reservedConcurrency)
        this.#reserve(fn);
    }
    this.#functions = this.#functions.map((fn) => byId.get(fn.logicalId) ?? fn);
    for (const fn of updated) {
      for (const env of this.#idle.get(fn.logicalId) ?? []) this.#retire(env);
      this.#idle.delete(fn.logicalId);
    }
  }

  async dispose(): Promise<void> {
    await Promise.all(this.environments.map((e) => e.dispose()));
  }
}
