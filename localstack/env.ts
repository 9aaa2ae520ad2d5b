/**
 * The environment onceflow's LocalStack scripts give `cdklocal` and the test suite, in one place.
 *
 * cdklocal 3 refuses `AWS_ENDPOINT_URL` without `AWS_ENDPOINT_URL_S3` and, when neither is set,
 * targets `localhost.localstack.cloud:4566` (a public DNS name that fails offline). Both are set
 * here, from `LOCALSTACK_ENDPOINT`, default `http://localhost:4566`, the port LocalStack's
 * docker-compose file publishes.
 */
export const DEFAULT_LOCALSTACK_ENDPOINT = 'http://localhost:4566';

/** LocalStack's endpoint: `LOCALSTACK_ENDPOINT`, else the default. */
export const localstackEndpoint = (env: NodeJS.ProcessEnv): string =>
  env.LOCALSTACK_ENDPOINT?.trim() || DEFAULT_LOCALSTACK_ENDPOINT;

/** What `cdklocal` and the deployed suite run with: every endpoint variable it reads, and test credentials unless set. */
export const localstackEnvironment = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => {
  const endpoint = localstackEndpoint(env);
  return {
    ...env,
    LOCALSTACK_ENDPOINT: endpoint,
    AWS_ENDPOINT_URL: endpoint,
    AWS_ENDPOINT_URL_S3: endpoint,
    AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID ?? 'test',
    AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY ?? 'test',
    AWS_REGION: env.AWS_REGION ?? 'us-east-1',
  };
};

/** Whether LocalStack answers its health endpoint at `endpoint` (within 3 s). */
export const localstackAnswers = async (endpoint: string): Promise<boolean> => {
  const res = await fetch(new URL('/_localstack/health', endpoint), {
    signal: AbortSignal.timeout(3000),
  }).catch(() => undefined);
  return res?.ok ?? false;
};
