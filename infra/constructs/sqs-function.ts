import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { bundledFunction } from './bundled-function.ts';
import type { QueueWithDlq } from './queue-with-dlq.ts';

export interface SqsFunctionProps {
  /** The handler file (exports `handler`). */
  readonly entry: string;
  /** The queue whose messages it processes. */
  readonly source: QueueWithDlq;
  readonly environment: Record<string, string>;
  /** Default 30 seconds. */
  readonly timeout?: Duration;
  /** Default 512 MB. */
  readonly memorySize?: number;
  /** Messages per invocation. Default 10. */
  readonly batchSize?: number;
  /** How long to gather a batch. Default none. */
  readonly maxBatchingWindow?: Duration;
  /** Concurrent invocations the event source mapping may run (2–1000). Default 10. */
  readonly maxConcurrency?: number;
  /** Default one month. */
  readonly logRetention?: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  /** Active X-Ray tracing through the Powertools Tracer. Default false. */
  readonly tracing?: boolean;
  /** Bundle the AWS SDK rather than load the runtime's copy. Default true. */
  readonly bundleAwsSdk?: boolean;
}

/**
 * A Node.js 24 / ARM64 function fed by an SQS queue with partial batch responses, bundled with
 * the local esbuild (no Docker), with its own log group.
 */
export class SqsFunction extends Construct {
  readonly fn: LambdaFunction;
  readonly timeout: Duration;
  readonly maxBatchingWindow: Duration;

  constructor(scope: Construct, id: string, props: SqsFunctionProps) {
    super(scope, id);
    this.timeout = props.timeout ?? Duration.seconds(30);
    this.maxBatchingWindow = props.maxBatchingWindow ?? Duration.seconds(0);
    // AWS: the queue's visibility timeout should be at least six times the function timeout
    // plus the batching window, or messages reappear while a retried batch is still running.
    const needed = 6 * this.timeout.toSeconds() + this.maxBatchingWindow.toSeconds();
    const visibility = props.source.visibilityTimeout.toSeconds();
    if (visibility < needed) {
      throw new Error(
        `${id}: the queue's visibility timeout (${visibility}s) must be at least 6 × timeout + batching window (${needed}s)`,
      );
    }
    this.fn = bundledFunction(this, id, {
      entry: props.entry,
      environment: props.environment,
      timeout: this.timeout,
      memorySize: props.memorySize ?? 512,
      logRetention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: props.removalPolicy,
      tracing: props.tracing ?? false,
      bundleAwsSdk: props.bundleAwsSdk ?? true,
    });
    this.fn.addEventSource(
      new SqsEventSource(props.source.queue, {
        batchSize: props.batchSize ?? 10,
        maxBatchingWindow: props.maxBatchingWindow,
        maxConcurrency: props.maxConcurrency ?? 10,
        reportBatchItemFailures: true,
      }),
    );
  }
}
