import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
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
}

/**
 * A Node.js 24 / ARM64 function fed by an SQS queue with partial batch responses, bundled with
 * the local esbuild (no Docker), with its own log group.
 */
export class SqsFunction extends Construct {
  readonly fn: NodejsFunction;
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
    const logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: props.removalPolicy,
    });
    // Its own role, allowed to write to its own log group and nothing else: the managed
    // AWSLambdaBasicExecutionRole would allow log writes to every log group of the account.
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `${id}: its own log group, plus the calls the stack grants it`,
    });
    role.addToPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        // The log group's ARN attribute ends in `:*`: its streams.
        resources: [logGroup.logGroupArn],
      }),
    );
    this.fn = new NodejsFunction(this, 'Function', {
      entry: props.entry,
      role,
      handler: 'handler',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      timeout: this.timeout,
      memorySize: props.memorySize ?? 512,
      logGroup,
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node24',
        minify: true,
        sourceMap: true,
        mainFields: ['module', 'main'],
        // The runtime provides AWS SDK v3; bundling it would triple the bundle.
        externalModules: ['@aws-sdk/*'],
        // Some dependencies are CommonJS and call require(): give ESM bundles one.
        banner:
          "import { createRequire as __onceflowRequire } from 'node:module'; const require = __onceflowRequire(import.meta.url);",
        forceDockerBundling: false,
      },
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
