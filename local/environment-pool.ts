/**
 * A running stack's functions and their execution environments, pooled as Lambda pools them:
 * one pool per function, whatever invokes it. An invocation takes the idle environment used
 * last, and a new one starts only when none is idle, so a trickle of messages keeps one
 * environment warm instead of cold-starting one per poller slot (ten at once for the ingest
 * function, all on the laptop's cores). A function's code and settings can be replaced while
 * it runs, as `UpdateFunctionCode` replaces them: environments of the old code finish what they
 * run and are shut down, and later invocations start fresh ones.
 */
import type { LambdaEnvironment } from './lambda-environment.ts';
import type { LocalFunction } from './provision.ts';

export class EnvironmentPool {
  #functions: readonly LocalFunction[];
  readonly #create: (fn: LocalFunction) => LambdaEnvironment;
  readonly #idle = new Map<string, LambdaEnvironment[]>();
  /** Every live environment, busy or idle. */
  readonly environments: LambdaEnvironment[] = [];

  constructor(
    functions: readonly LocalFunction[],
    /** Starts an environment of a function (cold, on its first invocation). */
    create: (fn: LocalFunction) => LambdaEnvironment,
  ) {
    this.#functions = functions;
    this.#create = create;
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

  /** Runs `work` in an idle environment of the function, or a new one. */
  async run<T>(logicalId: string, work: (env: LambdaEnvironment) => Promise<T>): Promise<T> {
    const fn = this.#current(logicalId);
    let env = this.#idle.get(logicalId)?.pop();
    if (!env) {
      env = this.#create(fn);
      this.environments.push(env);
    }
    try {
      return await work(env);
    } finally {
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
