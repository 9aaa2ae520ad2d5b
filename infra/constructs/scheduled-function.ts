import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaTarget } from 'aws-cdk-lib/aws-events-targets';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { bundledFunction } from './bundled-function.ts';

export interface ScheduledFunctionProps {
  /** The handler file (exports `handler`). */
  readonly entry: string;
  readonly environment: Record<string, string>;
  /** How often it runs. Default every 5 minutes. */
  readonly every?: Duration;
  /** Default 30 seconds. */
  readonly timeout?: Duration;
  /** Default 256 MB (it reads a few items and emits metrics). */
  readonly memorySize?: number;
  /** Default one month. */
  readonly logRetention?: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  /** Active X-Ray tracing through the Powertools Tracer. Default false. */
  readonly tracing?: boolean;
  /** Bundle the AWS SDK rather than load the runtime's copy. Default true. */
  readonly bundleAwsSdk?: boolean;
}

/** The bounds Lambda sets on an asynchronous event's maximum age. */
const MIN_EVENT_AGE_SECONDS = 60;
const MAX_EVENT_AGE_SECONDS = 6 * 3600;

/** A function run on a fixed schedule by an EventBridge rule, with its own log group and role. */
export class ScheduledFunction extends Construct {
  readonly fn: LambdaFunction;
  readonly rule: Rule;

  constructor(scope: Construct, id: string, props: ScheduledFunctionProps) {
    super(scope, id);
    this.fn = bundledFunction(this, id, {
      entry: props.entry,
      environment: props.environment,
      timeout: props.timeout ?? Duration.seconds(30),
      memorySize: props.memorySize ?? 256,
      logRetention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: props.removalPolicy,
      tracing: props.tracing ?? false,
      bundleAwsSdk: props.bundleAwsSdk ?? true,
    });
    const every = props.every ?? Duration.minutes(5);
    // A run that fails is simply superseded by the next one: no retries pile up. That takes two
    // settings. EventBridge's retry policy covers only its delivery to Lambda; Lambda queues the
    // event and invokes the function asynchronously, retrying a function error twice by default
    // (a minute, then two, after it), which the function's own async invoke config turns off.
    // An event still queued when the next run is due is dropped rather than run late.
    this.fn.configureAsyncInvoke({
      retryAttempts: 0,
      maxEventAge: Duration.seconds(
        Math.min(Math.max(every.toSeconds(), MIN_EVENT_AGE_SECONDS), MAX_EVENT_AGE_SECONDS),
      ),
    });
    this.rule = new Rule(this, 'Schedule', {
      description: `${id}: every ${every.toHumanString()}`,
      schedule: Schedule.rate(every),
      targets: [new LambdaTarget(this.fn, { retryAttempts: 0 })],
    });
  }
}
