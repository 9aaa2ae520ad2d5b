import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import {
  AssetHashType,
  DockerImage,
  type Duration,
  type ILocalBundling,
  type RemovalPolicy,
} from 'aws-cdk-lib';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Architecture,
  Code,
  Function as LambdaFunction,
  Runtime,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { type BundleRequest, externalModules } from '../bundling/bundle.ts';

export interface BundledFunctionProps {
  /** The handler file (exports `handler`). */
  readonly entry: string;
  readonly environment: Record<string, string>;
  readonly timeout: Duration;
  readonly memorySize: number;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  /**
   * Active X-Ray tracing through the Powertools Tracer. Default false: the tracer stays out of
   * the bundle (the handler loads it only when `POWERTOOLS_TRACE_ENABLED` is `true`).
   */
  readonly tracing?: boolean;
  /**
   * Bundle the AWS SDK (minified, from its ES module entry points) rather than load the copy
   * the runtime provides. Default true.
   */
  readonly bundleAwsSdk?: boolean;
}

const PROJECT_ROOT = join(import.meta.dirname, '..', '..');
const BUNDLER = join(import.meta.dirname, '..', 'bundling', 'bundle.ts');

/**
 * Bundles a handler with the project's esbuild (`infra/bundling/bundle.ts`, whose plugins, which
 * NodejsFunction's bundling cannot run, rewrite two parts of the SDK's code so that its unused
 * operations are left out and its modules initialize as plain code). Its request is a property
 * so that CDK, which keys its asset cache by the bundling options as JSON, tells one function's
 * bundle from another's.
 */
class EsbuildBundling implements ILocalBundling {
  readonly request: Omit<BundleRequest, 'outdir'>;

  constructor(request: Omit<BundleRequest, 'outdir'>) {
    this.request = request;
  }

  tryBundle(outdir: string): boolean {
    const run = spawnSync(
      process.execPath,
      [BUNDLER, JSON.stringify({ ...this.request, outdir } satisfies BundleRequest)],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    if (run.status !== 0)
      throw new Error(
        `bundling ${this.request.entry} failed (${run.error?.message ?? `exit code ${run.status}`})`,
      );
    return true;
  }
}

/**
 * The function's code, always bundled locally, never in Docker: the image is only the fallback
 * CDK requires, and is never pulled.
 */
const bundledCode = (request: Omit<BundleRequest, 'outdir'>): Code =>
  Code.fromAsset(PROJECT_ROOT, {
    // Hashed from the bundle: the same bundle, the same asset, whatever else changed.
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs24.x'),
      local: new EsbuildBundling(request),
    },
  });

/**
 * A Node.js 24 / ARM64 function bundled with the local esbuild (no Docker), with its own log
 * group and a role that may write to that log group only. Its parts (`Logs`, `Role`,
 * `Function`) are made in `scope` itself, so the construct that owns it keeps stable ids.
 */
export const bundledFunction = (
  scope: Construct,
  id: string,
  props: BundledFunctionProps,
): LambdaFunction => {
  const logGroup = new LogGroup(scope, 'Logs', {
    retention: props.logRetention,
    removalPolicy: props.removalPolicy,
  });
  // Its own role, allowed to write to its own log group and nothing else: the managed
  // AWSLambdaBasicExecutionRole would allow log writes to every log group of the account.
  const role = new Role(scope, 'Role', {
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
  return new LambdaFunction(scope, 'Function', {
    code: bundledCode({
      entry: props.entry,
      // Bundled, the SDK loads as one parsed file instead of hundreds of the runtime's
      // CommonJS modules: a shorter cold start for a larger bundle (see `npm run bench`).
      external: externalModules({
        bundleAwsSdk: props.bundleAwsSdk ?? true,
        tracing: props.tracing ?? false,
      }),
    }),
    role,
    handler: 'index.handler',
    runtime: Runtime.NODEJS_24_X,
    architecture: Architecture.ARM_64,
    timeout: props.timeout,
    memorySize: props.memorySize,
    logGroup,
    environment: {
      ...(props.tracing ? { POWERTOOLS_TRACE_ENABLED: 'true' } : {}),
      ...props.environment,
    },
    // Active tracing also grants the role xray:PutTraceSegments and xray:PutTelemetryRecords.
    ...(props.tracing ? { tracing: Tracing.ACTIVE } : {}),
  });
};
