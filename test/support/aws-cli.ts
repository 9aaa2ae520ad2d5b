import { execFile, spawnSync } from 'node:child_process';
import { LOCAL_CREDENTIALS } from '../../local/emulators.ts';

/** The AWS CLI's version line, when this machine has one (a fresh CI machine does not). */
export const awsCliVersion = (() => {
  const found = spawnSync('aws', ['--version'], { encoding: 'utf8' });
  return found.status === 0 ? `${found.stdout}${found.stderr}`.trim() : undefined;
})();

/** Says, once per test file, which tests skip because the CLI is absent. */
export const reportMissingAwsCli = (what: string): void => {
  if (!awsCliVersion) console.log(`the AWS CLI is not installed: ${what} skipped`);
};

/**
 * Runs the AWS CLI against a local edge, asynchronously (the edge runs in the test's own
 * process: a synchronous child would block it).
 */
export const awsCli = (
  edge: { readonly endpoint: string; readonly region: string },
  ...args: string[]
) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      'aws',
      ['--endpoint-url', edge.endpoint, '--region', edge.region, ...args],
      {
        env: {
          ...process.env,
          AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
          AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
        },
      },
      (error, stdout, stderr) =>
        resolve({ status: error ? (error.code as number) : 0, stdout, stderr }),
    );
  });
