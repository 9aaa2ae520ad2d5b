/**
 * How long a test waits for state it observes (a drained queue, a finished move task, a started
 * process): sized for a 2-core machine at load 10, where a step that takes 10 s alone can take
 * a minute. Waits end as soon as the state is seen, so a generous deadline costs nothing when
 * the machine is idle; no test asserts a duration.
 */
export const DEADLINE_MS = 180_000;
/** The same deadline in seconds, for the CLI's `--timeout`. */
export const DEADLINE_S = String(DEADLINE_MS / 1000);
