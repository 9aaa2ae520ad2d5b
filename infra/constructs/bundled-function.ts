import { join } from 'node:path';
import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

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

/**
 * The credential providers the SDK's default chain imports only when the environment holds no
 * credentials. Lambda always puts the function's credentials in its environment, so they never
 * load there; left out of the bundle, they would resolve from the runtime's own SDK if they
 * did. Bundled, their parsing alone made up a third of the init time.
 */
const UNUSED_CREDENTIAL_PROVIDERS = [
  '@aws-sdk/credential-provider-sso',
  '@aws-sdk/credential-provider-ini',
  '@aws-sdk/credential-provider-process',
  '@aws-sdk/credential-provider-web-identity',
  '@aws-sdk/credential-provider-http',
  '@smithy/credential-provider-imds',
];

const NODE_HTTP_SHIM = join(import.meta.dirname, '..', 'bundling', 'node-http.mjs');

/** Maps the bundle's stack traces to source lines when first formatted (see the file for why). */
const STACK_TRACES = join(import.meta.dirname, '..', 'bundling', 'stack-traces.ts');

/** The tracer's modules, left out of bundles that do not trace (nothing imports them then). */
const TRACER_MODULES = ['@aws-lambda-powertools/tracer', '@aws-lambda-powertools/tracer/*'];

/**
 * A Node.js 24 / ARM64 function bundled with the local esbuild (no Docker), with its own log
 * group and a role that may write to that log group only. Its parts (`Logs`, `Role`,
 * `Function`) are made in `scope` itself, so the construct that owns it keeps stable ids.
 */
export const bundledFunction = (
  scope: Construct,
  id: string,
  props: BundledFunctionProps,
): NodejsFunction => {
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
  return new NodejsFunction(scope, 'Function', {
    entry: props.entry,
    role,
    handler: 'handler',
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
    bundling: {
      format: OutputFormat.ESM,
      target: 'node24',
      minify: true,
      sourceMap: true,
      // Mappings only: stack traces need no more, and embedded sources would triple the map.
      sourcesContent: false,
      mainFields: ['module', 'main'],
      // Bundled, the SDK loads as one parsed file instead of hundreds of the runtime's
      // CommonJS modules: a shorter cold start for a larger bundle (see `npm run bench`).
      externalModules: [
        ...((props.bundleAwsSdk ?? true) ? UNUSED_CREDENTIAL_PROVIDERS : ['@aws-sdk/*']),
        ...(props.tracing ? [] : TRACER_MODULES),
      ],
      // Some dependencies are CommonJS and call require(): give ESM bundles one.
      banner:
        "import { createRequire as __onceflowRequire } from 'node:module'; const require = __onceflowRequire(import.meta.url);",
      // Stack traces mapped on demand rather than by --enable-source-maps at every load.
      inject: [STACK_TRACES],
      // node:http through require(), not an ES module facade (see the shim for why).
      esbuildArgs: { '--alias:node:http': NODE_HTTP_SHIM, '--alias:http': NODE_HTTP_SHIM },
      forceDockerBundling: false,
    },
  });
};
