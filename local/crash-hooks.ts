/**
 * Crashes injected at the edge, for tests and chaos: the environment that made a matching call
 * dies before the call reaches its emulator, or after it took effect (its answer is lost). An
 * environment is known by the access key it signs with.
 */
import type { EdgeCall, Emulators } from './emulators.ts';
import type { LambdaEnvironment } from './lambda-environment.ts';
import type { LocalFunction } from './provision.ts';

/** A crash injected at the edge: the environment that made a matching call dies around it. */
export interface CrashRule {
  /** Which call: e.g. `(call) => call.action === 'TransactWriteItems'`. */
  readonly when: (call: EdgeCall, fn: LocalFunction) => boolean;
  /** Before the call reaches the emulator, or after it took effect (its answer is lost). */
  readonly phase: 'before' | 'after';
  /** How many times it fires. Default 1. */
  readonly times?: number;
}

export interface CrashHooks {
  /** Environments by the access key they sign with. */
  readonly byKey: Map<string, LambdaEnvironment>;
  /** Crashes fired so far, as `phase:action@function`. */
  readonly crashes: readonly string[];
  addCrash(rule: CrashRule): void;
  remove(): void;
}

/** Installs the runtime's hooks on the edge; `onCall` is told about each call that took effect. */
export const installCrashHooks = (
  emulators: Emulators,
  onCall: ((call: EdgeCall, fn: LocalFunction) => void) | undefined,
): CrashHooks => {
  const byKey = new Map<string, LambdaEnvironment>();
  const crashes: string[] = [];
  const rules: { rule: CrashRule; fired: number }[] = [];
  const fire = async (phase: 'before' | 'after', call: EdgeCall): Promise<boolean> => {
    const env = call.accessKeyId ? byKey.get(call.accessKeyId) : undefined;
    if (!env) return false;
    const match = rules.find(
      (r) => r.rule.phase === phase && r.fired < (r.rule.times ?? 1) && r.rule.when(call, env.fn),
    );
    if (!match) return false;
    match.fired++;
    crashes.push(`${phase}:${call.action}@${env.fn.name}`);
    await env.crash();
    return true;
  };
  const remove = emulators.addHooks({
    beforeCall: async (call) => ((await fire('before', call)) ? 'drop' : 'forward'),
    afterCall: async (call, status) => {
      if (status < 300 && onCall) {
        const env = call.accessKeyId ? byKey.get(call.accessKeyId) : undefined;
        if (env) onCall(call, env.fn);
      }
      return status < 300 && (await fire('after', call)) ? 'drop' : 'deliver';
    },
  });
  return {
    byKey,
    crashes,
    addCrash: (rule) => {
      rules.push({ rule, fired: 0 });
    },
    remove,
  };
};
