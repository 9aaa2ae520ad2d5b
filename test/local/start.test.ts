import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { describe, expect, inject, it } from 'vitest';
import { adminClients } from '../../local/clients.ts';
import { waitFor } from '../../local/net.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const childrenOf = (pid: number): number[] =>
  execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);

describe('npm start as a process', () => {
  it('serves the stack to any SDK with --keep through local.json and leaves no process behind on Ctrl-C', async () => {
    const { assemblyDir, stackName } = inject('assembly');
    const state = join(mkdtempSync(join(tmpdir(), 'onceflow-start-')), 'local.json');
    const child = spawn(
      join(ROOT, 'node_modules', '.bin', 'node'),
      [
        'local/start.ts',
        '--keep',
        '--no-demo',
        '--port',
        '0',
        '--assembly',
        assemblyDir,
        '--stack',
        stackName,
        '--state',
        state,
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => {
      output += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      output += c.toString();
    });
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );
    await waitFor(() => output.includes('Ctrl-C stops everything') || child.exitCode !== null, {
      timeoutMs: DEADLINE_MS,
      what: 'the stack to run',
    });
    expect(output).toContain('Ctrl-C stops everything');
    // What the template holds that has no local meaning is said, not silently skipped.
    expect(output).toMatch(/not emulated: .*AWS::CloudWatch::Alarm.*AWS::IAM::Role/);

    const local = JSON.parse(readFileSync(state, 'utf8')) as {
      endpoint: string;
      region: string;
      outputs: Record<string, string>;
    };
    expect(local.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const { sqs } = adminClients(local.endpoint, local.region);
    const attrs = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: local.outputs.OrdersQueueUrl,
        AttributeNames: ['VisibilityTimeout'],
      }),
    );
    expect(attrs.Attributes?.VisibilityTimeout).toBe('180');

    const helpers = childrenOf(child.pid ?? 0);
    expect(helpers.length).toBeGreaterThan(0); // DynamoDB Local
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(helpers.filter(alive)).toEqual([]);
    expect(existsSync(state)).toBe(false);
  });

  it('explains how to get Java, or to use LocalStack, when there is none', async () => {
    const { assemblyDir, stackName } = inject('assembly');
    const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(
        join(ROOT, 'node_modules', '.bin', 'node'),
        [
          'local/start.ts',
          '--no-demo',
          '--port',
          '0',
          '--assembly',
          assemblyDir,
          '--stack',
          stackName,
        ],
        {
          cwd: ROOT,
          env: { ...process.env, PATH: join(ROOT, 'node_modules', '.bin') },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (c: Buffer) => {
        output += c.toString();
      });
      child.stderr.on('data', (c: Buffer) => {
        output += c.toString();
      });
      child.once('exit', (code) => resolve({ code, output }));
    });
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/DynamoDB Local needs Java 17 or newer/);
    expect(result.output).toMatch(/apt-get install openjdk-17/);
    expect(result.output).toMatch(/npm run deploy:localstack/);
    expect(result.output).not.toMatch(/\n\s+at /);
  });

  const start = (args: string[]) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(join(ROOT, 'node_modules', '.bin', 'node'), ['local/start.ts', ...args], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      for (const stream of [child.stdout, child.stderr])
        stream.on('data', (c: Buffer) => {
          output += c.toString();
        });
      child.once('exit', (code) => resolve({ code, output }));
    });

  it('refuses a retry delay that is not a number of seconds, before starting anything', async () => {
    const result = await start(['--retry-delay', 'abc']);
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/--retry-delay.*abc.*a number of seconds from 0 to 43200/);
  });

  it('names the stacks of the assembly in one line when --stack names none of them', async () => {
    const { assemblyDir, stackName } = inject('assembly');
    const result = await start(['--no-demo', '--assembly', assemblyDir, '--stack', 'wrong']);
    expect(result.code).toBe(1);
    expect(result.output).toContain(`✘ no stack wrong in ${assemblyDir} (found: ${stackName})`);
    expect(result.output).not.toMatch(/\n\s+at /);
  });
});
