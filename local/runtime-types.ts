/**
 * What the local runtime takes and gives (`runtime.ts` starts it): its options, the running stack
 * it hands back, and what a redeploy changed.
 */
import type { AwsClients } from '../adapters/clients.ts';
import type { AsyncOutcome } from './async-invocations.ts';
import type { CrashRule } from './crash-hooks.ts';
import type { RunningDynamoLocal } from './dynamodb-local.ts';
import type { EdgeCall, Emulators } from './emulators.ts';
import type { LambdaEnvironment } from './lambda-environment.ts';
import type { LocalFunction, ProvisionedStack } from './provision.ts';
import type { BatchReport, SqsPoller } from './sqs-poller.ts';

export interface LocalRuntimeOptions {
  /** The cloud assembly (cdk.out). */
  readonly assemblyDir: string;
  /** Which stack, when the assembly holds several. */
  readonly stackName?: string;
  /** Edge port to prefer (taken when free, else any). Default: any free port. */
  readonly port?: number;
  /** Event source mappings without a maximum concurrency get this many environments. Default 5. */
  readonly defaultMaxConcurrency?: number;
  /** See PollerOptions.retryDelaySeconds (not Lambda behaviour; off by default). */
  readonly retryDelaySeconds?: number;
  /** Directory for the functions' logs (one file per function); undefined discards them. */
  readonly logDir?: string;
  /** Told about every invocation. */
  readonly onBatch?: (fn: LocalFunction, report: BatchReport) => void;
  /**
   * Told about every attempt at a scheduled rule's run, as EventBridge and Lambda make them (its
   * function's result, or the error it threw and when Lambda retries it). A run asked for with
   * `runSchedule` goes back to its caller alone, which reports it (told here too, it would be
   * printed twice).
   */
  readonly onScheduled?: (fn: LocalFunction, outcome: AsyncOutcome) => void;
  /**
   * Lambda's waits before it retries a failed asynchronous invocation (a rule's run, an `Event`
   * invocation). Default 60 and 120 s.
   */
  readonly asyncRetryDelaysMs?: readonly number[];
  /** Told about every call a function made through the edge that took effect (status < 300). */
  readonly onCall?: (call: EdgeCall, fn: LocalFunction) => void;
  readonly warn?: (message: string) => void;
  /** Run on these emulators instead of starting (and later stopping) its own. */
  readonly emulators?: Emulators;
  /** Provision under this stack name instead of the template's (several copies side by side). */
  readonly localStackName?: string;
  /** See EmulatorOptions.dataDir (only when the runtime starts its own emulators). */
  readonly dataDir?: string;
  /** See EmulatorOptions.onFailure (only when the runtime starts its own emulators). */
  readonly onFailure?: (message: string) => void;
  /** See EmulatorOptions.dynamoLocal (only when the runtime starts its own emulators). */
  readonly dynamoLocal?: RunningDynamoLocal;
  /** See EmulatorOptions.readLagMs (only when the runtime starts its own emulators). */
  readonly readLagMs?: number;
}

/** What `LocalRuntime.update` did with a new synthesis of the running stack. */
export interface StackUpdate {
  /** The functions now running new code or settings: each invocation from now on gets them. */
  readonly updated: readonly LocalFunction[];
  /** What else changed (queues, tables, buckets, schedules…): one line each, a restart takes it. */
  readonly restartNeeded: readonly string[];
  /** Each mapping the template changed in place (batch size, scaling…): what moved, or why not. */
  readonly mappings: readonly string[];
}

export interface LocalRuntime {
  readonly endpoint: string;
  readonly region: string;
  readonly stack: ProvisionedStack;
  readonly emulators: Emulators;
  /** Clients for operators and tests (not given to the functions). */
  readonly clients: AwsClients;
  readonly pollers: ReadonlyMap<string, SqsPoller>;
  readonly environments: readonly LambdaEnvironment[];
  /**
   * Invocations throttled so far by reserved concurrency, by function logical id (Lambda's
   * `Throttles` metric; a throttled invocation writes no log).
   */
  readonly throttles: ReadonlyMap<string, number>;
  /** Crashes fired so far, as `phase:action@function`. */
  readonly crashes: readonly string[];
  addCrash(rule: CrashRule): void;
  /**
   * Invokes a function directly (like Lambda's Invoke API), by logical id or name; with `log`,
   * what it writes meanwhile is appended there (Lambda's log tail).
   */
  invoke(fn: string, event: unknown, log?: string[], requestId?: string): Promise<unknown>;
  /** Waits until every polled queue is empty with nothing in flight. */
  drain(options?: { timeoutMs?: number }): Promise<void>;
  /**
   * Runs a scheduled rule's function now, with the event EventBridge sends (by the function's
   * logical id, its name, or a prefix of its logical id); resolves with its result.
   */
  runSchedule(fn: string): Promise<unknown>;
  /**
   * Takes the functions' code and settings from a new synthesis of the stack (a cloud assembly
   * holding it under the same name), as `UpdateFunctionCode` and `UpdateFunctionConfiguration`
   * do on Lambda: invocations running now finish on the code they started with, and every later
   * one runs in a fresh environment with the new code; idle environments of an updated function
   * are shut down. Other changes are reported, not applied. A template whose functions cannot be
   * read (a bundle missing, an environment Lambda would refuse) throws and changes nothing.
   */
  update(assemblyDir: string): Promise<StackUpdate>;
  stop(): Promise<void>;
}
