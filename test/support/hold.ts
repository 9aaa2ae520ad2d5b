/**
 * Holds a function's invocation running: the first call a function makes through the edge that
 * matches waits there until released, so a test can act while the invocation is under way.
 */
import { type EdgeCall, type Emulators, LOCAL_CREDENTIALS } from '../../local/emulators.ts';
import { waitFor } from '../../local/net.ts';
import { DEADLINE_MS } from './deadlines.ts';

export interface HeldCall {
  /** Resolves once a matching call has arrived and is held; fails after the deadline. */
  reached(): Promise<void>;
  /** Lets the held call (and every later one) through. */
  release(): void;
}

/**
 * Holds the first call matching `when` made by a function (signed with an environment's key, not
 * the operator's). The hook is removed when released.
 */
export const holdFirstCall = (
  emulators: Emulators,
  when: (call: EdgeCall) => boolean,
): HeldCall => {
  let held = false;
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const remove = emulators.addHooks({
    beforeCall: async (call): Promise<'forward'> => {
      if (held || call.accessKeyId === LOCAL_CREDENTIALS.accessKeyId || !when(call))
        return 'forward';
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
