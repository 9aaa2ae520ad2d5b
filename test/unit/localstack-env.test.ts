import { describe, expect, it } from 'vitest';
import { localstackEndpoint, localstackEnvironment } from '../../localstack/env.ts';

describe('the environment the LocalStack scripts give cdklocal', () => {
  it('sets both endpoint variables cdklocal 3 requires when LOCALSTACK_ENDPOINT is unset', () => {
    const env = localstackEnvironment({ PATH: '/usr/bin' });
    expect(env).toEqual({
      PATH: '/usr/bin',
      LOCALSTACK_ENDPOINT: 'http://localhost:4566',
      AWS_ENDPOINT_URL: 'http://localhost:4566',
      AWS_ENDPOINT_URL_S3: 'http://localhost:4566',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_REGION: 'us-east-1',
    });
  });

  it('points both endpoint variables at LOCALSTACK_ENDPOINT and keeps the caller’s credentials when set', () => {
    const env = localstackEnvironment({
      LOCALSTACK_ENDPOINT: 'http://10.0.0.5:4599',
      AWS_ENDPOINT_URL: 'http://elsewhere:1',
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_REGION: 'eu-west-1',
    });
    expect(env.AWS_ENDPOINT_URL).toBe('http://10.0.0.5:4599');
    expect(env.AWS_ENDPOINT_URL_S3).toBe('http://10.0.0.5:4599');
    expect(env.AWS_ACCESS_KEY_ID).toBe('AKIDEXAMPLE');
    expect(env.AWS_SECRET_ACCESS_KEY).toBe('secret');
    expect(env.AWS_REGION).toBe('eu-west-1');
  });

  it('falls back to the default endpoint when LOCALSTACK_ENDPOINT is blank', () => {
    expect(localstackEndpoint({ LOCALSTACK_ENDPOINT: '  ' })).toBe('http://localhost:4566');
  });
});
