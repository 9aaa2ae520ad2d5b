/**
 * Where the CLI connects, from its options and the environment: the wrong stack, region or
 * account is the costliest mistake an operator's tool can make, so each rule is pinned here.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliError, connectionFor } from '../../cli/target.ts';
import { writeLocalState } from '../../local/state.ts';

describe('the CLI’s connection', () => {
  it('goes to AWS with the SDK’s own credentials: the stack onceflow-dev, the region from the environment', () => {
    expect(connectionFor({ target: 'aws' }, {})).toEqual({
      endpoint: undefined,
      stackName: 'onceflow-dev',
      region: 'us-east-1',
    });
    expect(connectionFor({ target: 'aws' }, { AWS_DEFAULT_REGION: 'eu-west-1' }).region).toBe(
      'eu-west-1',
    );
    // AWS_REGION (the SDK's) before AWS_DEFAULT_REGION (the AWS CLI's); --region before both.
    const env = { AWS_REGION: 'eu-central-1', AWS_DEFAULT_REGION: 'eu-west-1' };
    expect(connectionFor({ target: 'aws' }, env).region).toBe('eu-central-1');
    expect(
      connectionFor({ target: 'aws', region: 'ap-south-1', stackName: 'onceflow-prod' }, env),
    ).toEqual({ endpoint: undefined, stackName: 'onceflow-prod', region: 'ap-south-1' });
  });

  it('leaves the region to a profile’s config unless --region names one', () => {
    const env = { AWS_REGION: 'eu-central-1' };
    expect(connectionFor({ target: 'aws', profile: 'ops' }, env)).toEqual({
      endpoint: undefined,
      stackName: 'onceflow-dev',
      region: undefined,
      profile: 'ops',
    });
    expect(connectionFor({ target: 'aws', profile: 'ops', region: 'us-west-2' }, env).region).toBe(
      'us-west-2',
    );
  });

  it('goes to LocalStack’s endpoint with test credentials, or those the environment sets', () => {
    expect(connectionFor({ target: 'localstack' }, {})).toEqual({
      endpoint: 'http://localhost:4566',
      stackName: 'onceflow-dev',
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    const env = {
      LOCALSTACK_ENDPOINT: 'http://127.0.0.1:4666',
      AWS_ACCESS_KEY_ID: 'AKID',
      AWS_SECRET_ACCESS_KEY: 'secret',
    };
    expect(connectionFor({ target: 'localstack' }, env)).toMatchObject({
      endpoint: 'http://127.0.0.1:4666',
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' },
    });
    expect(
      connectionFor({ target: 'localstack', endpoint: 'http://127.0.0.1:9' }, env).endpoint,
    ).toBe('http://127.0.0.1:9');
  });

  it('goes to the running local stack that npm start -- --keep recorded, and to none that stopped', () => {
    const dir = mkdtempSync(join(tmpdir(), 'onceflow-target-'));
    const localState = join(dir, 'local.json');
    const state = {
      endpoint: 'http://127.0.0.1:4577',
      region: 'us-east-1',
      stackName: 'onceflow-local',
      outputs: {},
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      pid: process.pid,
      startedAt: new Date().toISOString(),
    };
    writeLocalState(localState, state);
    // The environment plays no part: the recorded stack is where the CLI goes.
    expect(
      connectionFor(
        { target: 'local', localState },
        { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'x' },
      ),
    ).toEqual({
      endpoint: state.endpoint,
      stackName: state.stackName,
      region: 'us-east-1',
      credentials: state.credentials,
    });
    expect(connectionFor({ target: 'local', localState, stackName: 'other' }, {}).stackName).toBe(
      'other',
    );
    expect(
      connectionFor({ target: 'local', localState, endpoint: 'http://127.0.0.1:9' }, {}).endpoint,
    ).toBe('http://127.0.0.1:9');
    // A pid above any system's limit (2^22): no process holds it, the stack stopped.
    writeLocalState(localState, { ...state, pid: 2 ** 22 + 1 });
    expect(() => connectionFor({ target: 'local', localState }, {})).toThrow(CliError);
    expect(() => connectionFor({ target: 'local', localState }, {})).toThrow(/no longer running/);
    expect(() =>
      connectionFor({ target: 'local', localState: join(dir, 'none.json') }, {}),
    ).toThrow(/no running local stack/);
  });
});
