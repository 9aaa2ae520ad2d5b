/**
 * How the local SQS poller (`sqs-poller.ts`) is set up and what it reports: the settings of an
 * event source mapping, and the hooks tests, chaos and the runtime give it.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { FilterPattern } from './event-filter.ts';
import type { toSqsEvent } from './sqs-event.ts';

type SqsEvent = ReturnType<typeof toSqsEvent>;

export interface PollerOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly region: string;
  readonly batchSize: number;
  readonly batchingWindowSeconds: number;
  readonly maxConcurrency: number;
  readonly reportBatchItemFailures: boolean;
  /**
   * The mapping's `FilterCriteria`: a message whose body no filter matches is deleted without
   * being invoked, as Lambda does. Default none: every message is invoked.
   */
  readonly filters?: readonly FilterPattern[];
  /**
   * Runs one invocation in the given concurrency slot; rejects when the invocation failed.
   * `receivedAtMs`: when its messages were received, from which their visibility timeout runs.
   */
  readonly invoke: (
    slot: number,
    event: SqsEvent,
    at: { receivedAtMs: number },
  ) => Promise<unknown>;
  /**
   * Not Lambda: make failed messages visible again after this many seconds instead of the
   * queue's visibility timeout (demos and tests that should not wait minutes). Default: off.
   */
  readonly retryDelaySeconds?: number;
  /**
   * Told about every invocation and what became of its messages, before the slot receives
   * again (a returned promise is awaited).
   */
  readonly onBatch?: (report: BatchReport) => void | Promise<void>;
  /** Messages asked for by each receive; default `batchSize` (chaos varies it per call). */
  readonly receiveSize?: () => number;
}

export interface DrainOptions {
  /** Give up (and throw) after this long. Default 120 s, sized for a loaded 2-core machine. */
  readonly timeoutMs?: number;
}

export interface BatchReport {
  readonly messageIds: readonly string[];
  readonly failedIds: readonly string[];
  /** Why the whole batch failed, if it did. */
  readonly error?: string;
}

/** What an event source mapping's update may change while it runs. */
export type MappingSettings = Pick<
  PollerOptions,
  'batchSize' | 'batchingWindowSeconds' | 'maxConcurrency' | 'reportBatchItemFailures' | 'filters'
>;

/**
 * A mapping's state in Lambda's words. Disabling lasts while a batch received before the pause
 * is still being invoked or settled; Lambda's own transition takes seconds even when idle.
 */
export type MappingState = 'Enabled' | 'Disabling' | 'Disabled';
