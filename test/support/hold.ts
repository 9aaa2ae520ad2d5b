/**
 * Holds a function's invocation running: the first call one of its environments makes through
 * the edge that matches waits there until released, so a test can act while the invocation is
 * under way.
 */
import type { EdgeCall } from '../../local/emulators.ts';
import { waitFor } from '../../local/net.ts';
import type { LocalRuntime } from '../../local/runtime.ts';
import { DEADLINE_MS } from './deadlines.ts';

export interface HeldCall {
  /** Resolves once a matching call has arrived and is held; fails after the deadline. */
  reached(): Promise<void>;
  /** Lets the held call (and every later one) through. */
  release(): void;
}

/**
 * Holds the first call matching `when` made by the function whose logical id starts with
 * `functionId` (known by the key its environment signs with). The hook is removed when released.
 */
export const holdFirstCall = (
  runtime: LocalRuntime,
  functionId: string,
  when: (call: EdgeCall) => boolean,
): HeldCall => {
  let held = false;
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const isFunction = (call: EdgeCall) =>
    runtime.environments
      .find((env) => call.accessKeyId !== undefined && env.accessKeyId === call.accessKeyId)
      ?.fn.logicalId.startsWith(functionId) ?? false;
  const remove = runtime.emulators.addHooks({
    beforeCall: async (call): Promise<'forward'> => {
      if (held || !isFunction(call) || !when(call)) return 'forward';
      held = true;
      await released;
      return 'forward';
    },
  });
  return {
    reached: () => waitFor(() => held, { timeoutMs: DEADLINE_MS, what: 'a call to hold' }),
    release: () => {
      remove();
      release();
    },
  };
};
