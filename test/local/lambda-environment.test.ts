/**
 * A local execution environment fails an invocation as Lambda does: a response over the quota,
 * what the handler threw, a timeout, each with the error type Lambda reports.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { InvocationError, LambdaEnvironment } from '../../local/lambda-environment.ts';
import { RESPONSE_PAYLOAD_BYTES } from '../../local/lambda-quotas.ts';
import { buildLambdaWorkerEntry } from '../../local/lambda-worker-entry.ts';

const dir = mkdtempSync(join(tmpdir(), 'onceflow-env-'));
const handlerFile = join(dir, 'handler.mjs');
// Answers with `count` repeats of `char` (a JSON string: two bytes of quotes more), throws,
// sleeps, lists the environment's loaded Node modules of a name or reads variables, as the event
// asks.
writeFileSync(
  handlerFile,
  `export const handler = async (event) => {
    if (event.throw) { const e = new Error('order 7 is unknown'); e.name = 'OrderError'; throw e; }
    if (event.sleepMs) await new Promise((r) => setTimeout(r, event.sleepMs));
    if (event.loaded) return process.moduleLoadList.filter((m) => m.includes(event.loaded));
    if (event.lines) {
      for (let i = 0; i < event.lines; i++) console.log(JSON.stringify({ i, pad: 'x'.repeat(2000) }));
      return 'logged';
    }
    if (event.env) return Object.fromEntries(event.env.map((k) => [k, process.env[k] ?? null]));
    return (event.char ?? 'x').repeat(event.count ?? 1);
  };
`,
);

const environments: LambdaEnvironment[] = [];
const environment = (timeoutSeconds: number, platform?: (text: string) => void) => {
  const env = new LambdaEnvironment(
    {
      logicalId: 'Fn',
      name: 'fn',
      arn: 'arn:aws:lambda:us-east-1:000000000000:function:fn',
      handlerFile,
      handlerExport: 'handler',
      environment: {},
      timeoutSeconds,
      memoryMb: 128,
      codeSha256: '',
      lastModified: new Date().toISOString(),
    },
    {
      baseEnvironment: {},
      accessKeyId: (generation) => `AKIDLOCAL${generation}`,
      ...(platform ? { platform } : {}),
    },
  );
  environments.push(env);
  return env;
};
afterAll(async () => {
  await Promise.all(environments.map((env) => env.dispose()));
});

/** The InvocationError an invocation fails with. */
const failureOf = async (promise: Promise<unknown>): Promise<InvocationError> => {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof InvocationError))
    throw new Error(`expected an InvocationError, got ${String(error)}`);
  return error;
};

describe('a local execution environment', () => {
  it('sets the variables Lambda sets in an environment: on-demand initialization, runtime, version, log group and stream, task root, handler', async () => {
    const keys = [
      'AWS_EXECUTION_ENV',
      'AWS_LAMBDA_FUNCTION_NAME',
      'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
      'AWS_LAMBDA_FUNCTION_VERSION',
      'AWS_LAMBDA_INITIALIZATION_TYPE',
      'AWS_LAMBDA_LOG_GROUP_NAME',
      'AWS_LAMBDA_LOG_STREAM_NAME',
      'LAMBDA_TASK_ROOT',
      '_HANDLER',
    ];
    const seen = await environment(300).invoke({ env: keys });
    const today = new Date().toISOString().slice(0, 10).replaceAll('-', '/');
    expect(seen).toEqual({
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
      AWS_LAMBDA_FUNCTION_NAME: 'fn',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '128',
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      // Powertools counts a cold start only under this value.
      AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      AWS_LAMBDA_LOG_GROUP_NAME: '/aws/lambda/fn',
      AWS_LAMBDA_LOG_STREAM_NAME: expect.stringMatching(
        new RegExp(`^${today}/\\[\\$LATEST\\][0-9a-f]{32}$`),
      ),
      LAMBDA_TASK_ROOT: dir,
      _HANDLER: 'handler.handler',
    });
    // A log stream per environment.
    const streamOf = (variables: unknown) =>
      typeof variables === 'object' &&
      variables !== null &&
      'AWS_LAMBDA_LOG_STREAM_NAME' in variables
        ? variables.AWS_LAMBDA_LOG_STREAM_NAME
        : undefined;
    const other = await environment(300).invoke({ env: ['AWS_LAMBDA_LOG_STREAM_NAME'] });
    expect(streamOf(other)).toEqual(expect.stringMatching(/^\d{4}\/\d\d\/\d\d\/\[\$LATEST\]/));
    expect(streamOf(other)).not.toBe(streamOf(seen));
  });

  it('returns a response of exactly 6,291,556 bytes and fails one a byte over with Function.ResponseSizeTooLarge, then serves the next', async () => {
    // Lambda's figure, from its own error message: 6 MB and 100 bytes.
    expect(RESPONSE_PAYLOAD_BYTES).toBe(6_291_556);
    const env = environment(300);
    const atQuota = await env.invoke({ count: RESPONSE_PAYLOAD_BYTES - 2 });
    expect(typeof atQuota === 'string' && atQuota.length).toBe(RESPONSE_PAYLOAD_BYTES - 2);
    const over = await failureOf(env.invoke({ count: RESPONSE_PAYLOAD_BYTES - 1 }));
    expect(over).toMatchObject({
      kind: 'response-size',
      errorType: 'Function.ResponseSizeTooLarge',
      errorMessage: `Response payload size exceeded maximum allowed payload size (${RESPONSE_PAYLOAD_BYTES} bytes).`,
    });
    // Counted in UTF-8 bytes: a third as many characters of three bytes each are over too.
    const euros = Math.ceil((RESPONSE_PAYLOAD_BYTES - 1) / 3);
    expect((await failureOf(env.invoke({ char: '€', count: euros }))).kind).toBe('response-size');
    expect(await env.invoke({ count: 3 })).toBe('xxx');
    expect(env.coldStarts).toBe(1);
  });

  it('logs Lambda’s START, END and REPORT lines around each invocation, the init duration on a cold start only, and a failure before END', async () => {
    const lines: string[] = [];
    const env = environment(1, (text) => lines.push(...text.trimEnd().split('\n')));
    const tail: string[] = [];
    await env.invoke({ count: 1 }, tail, 'req-1');
    await env.invoke({ count: 1 }, undefined, 'req-2');
    await failureOf(env.invoke({ throw: true }, undefined, 'req-3'));
    await failureOf(env.invoke({ sleepMs: 600_000 }, undefined, 'req-4'));
    const report = (id: string) => lines.find((l) => l.startsWith(`REPORT RequestId: ${id}\t`));
    const cold =
      /^REPORT RequestId: req-1\tDuration: ([\d.]+) ms\tBilled Duration: (\d+) ms\tMemory Size: 128 MB\tInit Duration: ([\d.]+) ms$/.exec(
        report('req-1') ?? '',
      );
    if (!cold) throw new Error(`no cold REPORT line in ${lines.join('\n')}`);
    // Lambda bills a cold start's init with its invocation: the printed figures' sum, rounded
    // up (added in hundredths, as printed, so that no binary fraction tips it over).
    const hundredths = (figure: string | undefined) => Math.round(Number(figure) * 100);
    expect(Number(cold[2])).toBe(Math.ceil((hundredths(cold[1]) + hundredths(cold[3])) / 100));
    expect(report('req-2')).toMatch(
      /^REPORT RequestId: req-2\tDuration: [\d.]+ ms\tBilled Duration: \d+ ms\tMemory Size: 128 MB$/,
    );
    const of = (id: string) => lines.filter((l) => l.includes(id));
    expect(of('req-2').map((l) => l.split(/[\t ]/)[0])).toEqual(['START', 'END', 'REPORT']);
    expect(of('req-3')[1]).toMatch(
      /^\S+Z\treq-3\tERROR\tInvoke Error \t\{"errorType":"OrderError","errorMessage":"order 7 is unknown","trace":\[/,
    );
    expect(of('req-4')[1]).toMatch(/^\S+Z req-4 Task timed out after 1.00 seconds$/);
    expect(of('req-4').at(-1)).toMatch(/^REPORT RequestId: req-4\tDuration: /);
    // The caller's tail gets the same lines, its invocation's only.
    expect(tail.join('')).toMatch(
      /^START RequestId: req-1 Version: \$LATEST\nEND RequestId: req-1\nREPORT RequestId: req-1\t/,
    );
  });

  it('closes an invocation’s log only after everything the function wrote, however much', async () => {
    const env = environment(300);
    for (let n = 0; n < 20; n++) {
      const tail: string[] = [];
      await env.invoke({ lines: 50 }, tail, `req-${n}`);
      const lines = tail.join('').trimEnd().split('\n');
      expect(lines[0]).toBe(`START RequestId: req-${n} Version: $LATEST`);
      expect(lines.slice(1, -2).map((l) => JSON.parse(l).i)).toEqual([...Array(50).keys()]);
      expect(lines.at(-2)).toBe(`END RequestId: req-${n}`);
    }
  });

  it('reports what the handler threw by its own type, message and trace', async () => {
    const failure = await failureOf(environment(300).invoke({ throw: true }));
    expect(failure).toMatchObject({
      kind: 'handled',
      errorType: 'OrderError',
      errorMessage: 'order 7 is unknown',
    });
    expect(failure.trace[0]).toBe('OrderError: order 7 is unknown');
    expect(failure.trace.some((line) => line.includes('handler.mjs'))).toBe(true);
  });

  it('fails an invocation that outlasts its timeout as Sandbox.Timedout, and starts a fresh environment for the next', async () => {
    const env = environment(1);
    const failure = await failureOf(env.invoke({ sleepMs: 600_000 }));
    expect(failure).toMatchObject({
      kind: 'timeout',
      errorType: 'Sandbox.Timedout',
      errorMessage: 'Task timed out after 1.00 seconds',
    });
    expect(failure.trace).toEqual([]);
    expect(await env.invoke({ count: 1 })).toBe('x');
    expect(env.coldStarts).toBe(2);
  });

  it('runs nothing but JavaScript before the handler, so Node never loads its TypeScript stripper into an environment', async () => {
    const env = environment(300);
    // Node's own modules load in each isolate; amaro is its type stripper.
    expect(await env.invoke({ loaded: 'internal/modules/esm' })).not.toEqual([]);
    expect(await env.invoke({ loaded: 'amaro' })).toEqual([]);
    expect(env.coldStarts).toBe(1);
  });

  it('builds the worker script once into its cache as JavaScript, and runs the TypeScript when the cache cannot be written', async () => {
    const cache = join(dir, 'cache');
    const [first, second] = await Promise.all([
      buildLambdaWorkerEntry(cache),
      buildLambdaWorkerEntry(cache),
    ]);
    expect(second.href).toBe(first.href);
    expect(fileURLToPath(first).startsWith(cache)).toBe(true);
    expect(first.pathname).toMatch(/lambda-worker-[0-9a-f]{16}\.mjs$/);
    expect(readFileSync(first, 'utf8')).toContain('lambda-worker runs as a worker thread');
    // A cache below a file cannot be created (ENOTDIR).
    const unwritable = await buildLambdaWorkerEntry(join(handlerFile, 'cache'));
    expect(unwritable.pathname.endsWith('/local/lambda-worker.ts')).toBe(true);
  });
});
