/**
 * Where the CLI works: the running local stack, LocalStack or AWS. One code path: the stack's
 * resources always come from CloudFormation's DescribeStacks (the local edge answers it too);
 * only the endpoint and the stack name differ.
 */
import { existsSync } from 'node:fs';
import type { CloudFormationClientConfig } from '@aws-sdk/client-cloudformation';
import type { AwsClients } from '../adapters/clients.ts';
import { DEFAULT_LOCAL_STATE, type LocalState, readLocalState } from '../local/state.ts';
import { localstackEndpoint } from '../localstack/env.ts';

export { DEFAULT_LOCAL_STATE };

/** An error the CLI prints as one line (no stack trace unless --verbose). */
export class CliError extends Error {
  override readonly name = 'CliError';
}

export type TargetKind = 'local' | 'localstack' | 'aws';

export interface TargetOptions {
  readonly target: TargetKind;
  readonly endpoint?: string;
  readonly stackName?: string;
  readonly region?: string;
  /** A named profile of the shared AWS config and credentials files (aws and localstack). */
  readonly profile?: string;
  /** Where `npm start -- --keep` wrote the local endpoints. */
  readonly localState?: string;
}

export interface Target {
  readonly kind: TargetKind;
  readonly endpoint: string | undefined;
  readonly region: string;
  readonly stackName: string;
  readonly clients: AwsClients;
  readonly outputs: Readonly<Record<string, string>>;
  /** A required stack output, or a clear error naming it. */
  output(name: string): string;
  /** How the clients were configured (region, endpoint, credentials, profile), for more clients. */
  readonly clientConfig?: {
    readonly region?: string;
    readonly endpoint?: string;
    readonly credentials?: { accessKeyId: string; secretAccessKey: string };
    readonly profile?: string;
  };
}

const running = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

export interface Connection {
  readonly endpoint: string | undefined;
  readonly stackName: string;
  /** Undefined: the SDK's own resolution (the profile's region, then the environment). */
  readonly region: string | undefined;
  readonly credentials?: { accessKeyId: string; secretAccessKey: string };
  readonly profile?: string;
}

/** The running local stack that `npm start -- --keep` recorded in `file`, or a clear error. */
export const runningLocalState = (file: string = DEFAULT_LOCAL_STATE): LocalState => {
  if (!existsSync(file)) {
    throw new CliError(
      `no running local stack (${file} not found): start one with \`npm start -- --keep\` or \`npx onceflow local up\``,
    );
  }
  const read = readLocalState(file);
  if (!read.ok)
    throw new CliError(
      `${file} is not a local stack description (${read.problem}); restart \`npm start -- --keep\``,
    );
  const { state } = read;
  if (!running(state.pid))
    throw new CliError(
      `the local stack recorded in ${file} is no longer running (pid ${state.pid}); start it again`,
    );
  return state;
};

const localConnection = (options: TargetOptions): Connection => {
  const state = runningLocalState(options.localState);
  return {
    endpoint: options.endpoint ?? state.endpoint,
    stackName: options.stackName ?? state.stackName,
    region: state.region,
    credentials: state.credentials,
  };
};

/**
 * Where and as whom the CLI connects: the running local stack's recorded endpoint and
 * credentials; LocalStack's endpoint and test credentials (or the environment's); AWS through the
 * SDK's own chain. `env` is the process's environment, read here at the CLI's edge.
 */
export const connectionFor = (
  options: TargetOptions,
  env: Readonly<Record<string, string | undefined>>,
): Connection => {
  if (options.target === 'local') return localConnection(options);
  const stackName = options.stackName ?? 'onceflow-dev';
  const envRegion = env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  // With a profile, its region applies unless --region says otherwise.
  const region = options.region ?? (options.profile ? undefined : (envRegion ?? 'us-east-1'));
  if (options.profile) {
    return { endpoint: options.endpoint, stackName, region, profile: options.profile };
  }
  if (options.target === 'aws') return { endpoint: options.endpoint, stackName, region };
  return {
    endpoint: options.endpoint ?? localstackEndpoint(env),
    stackName,
    region,
    credentials: {
      accessKeyId: env.AWS_ACCESS_KEY_ID ?? 'test',
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? 'test',
    },
  };
};

/** The stack's outputs from CloudFormation's DescribeStacks (the local edge answers it too). */
const stackOutputs = async (
  c: Connection,
  config: CloudFormationClientConfig,
): Promise<Record<string, string>> => {
  const where = c.endpoint ?? `AWS (${c.region ?? `the region of profile ${c.profile}`})`;
  // The SDK's clients load with the first command that needs a stack, not with the CLI: a
  // command that needs none (`generate`, `local`, `chaos`, the help) loads none of them.
  const { CloudFormationClient, DescribeStacksCommand } = await import(
    '@aws-sdk/client-cloudformation'
  );
  try {
    const described = await new CloudFormationClient(config).send(
      new DescribeStacksCommand({ StackName: c.stackName }),
    );
    return Object.fromEntries(
      (described.Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue ?? '']),
    );
  } catch (error) {
    const message = (error as Error).message;
    if (c.profile && (error as Error).name === 'CredentialsProviderError')
      throw new CliError(
        `profile ${c.profile}: ${message} (the shared files: ~/.aws/config and ~/.aws/credentials, or AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE)`,
        { cause: error },
      );
    if (/does not exist/.test(message))
      throw new CliError(`unknown stack ${c.stackName} on ${where}`, { cause: error });
    throw new CliError(`could not reach ${where} to describe ${c.stackName}: ${message}`, {
      cause: error,
    });
  }
};

export const resolveTarget = async (options: TargetOptions): Promise<Target> => {
  const connection = connectionFor(options, process.env);
  const { endpoint, stackName, credentials, profile } = connection;
  const config = {
    ...(connection.region ? { region: connection.region } : {}),
    ...(endpoint ? { endpoint } : {}),
    ...(credentials ? { credentials } : {}),
    ...(profile ? { profile } : {}),
  };
  const [outputs, { DynamoDBClient }, { S3Client }, { SQSClient }] = await Promise.all([
    stackOutputs(connection, config),
    import('@aws-sdk/client-dynamodb'),
    import('@aws-sdk/client-s3'),
    import('@aws-sdk/client-sqs'),
  ]);
  const region = connection.region ?? (await new SQSClient(config).config.region());
  const clients: AwsClients = {
    dynamo: new DynamoDBClient(config),
    s3: new S3Client({ ...config, forcePathStyle: options.target !== 'aws' }),
    sqs: new SQSClient(config),
  };
  return {
    kind: options.target,
    endpoint,
    region,
    stackName,
    clients,
    outputs,
    clientConfig: config,
    output: (name) => {
      const value = outputs[name];
      if (!value)
        throw new CliError(
          `stack ${stackName} has no output ${name} (deployed by an older onceflow? \`cdk deploy\` adds it)`,
        );
      return value;
    },
  };
};
