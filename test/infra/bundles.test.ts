/**
 * The deployed bundles as Lambda runs them: each loads in a fresh Node 24 process with nothing
 * beside it (no node_modules: the AWS SDK is bundled) and runs its first invocation against the
 * local edge, within the size budget the README states.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, inject, it } from 'vitest';
import { firstEvent, functionOf, runFresh } from '../../harness/bench/cold-start.ts';
import { referenceModel } from '../../harness/model.ts';
import { adminClients } from '../../local/clients.ts';
import { LOCAL_REGION } from '../../local/emulators.ts';
import { runProcess } from '../../local/process.ts';
import { toSqsEvent } from '../../local/sqs-event.ts';
import { provisionStackCopy } from '../../local/stack-copy.ts';
import { hourObjectKey } from '../../shared/keys.ts';
import { parseBatch } from '../support/json.ts';
import { uniqueName } from '../support/pipeline.ts';

/** Per bundle, minified with the SDK inside (the README's performance section gives today's). */
const BUNDLE_BUDGET_BYTES = 640 * 1024;

/** A copy of the synthesized stack of the test's own, with its functions' bundles. */
const ownCopy = (name: string) => {
  const { assemblyDir, stackName } = inject('assembly');
  return provisionStackCopy({
    assemblyDir,
    stackName,
    endpoint: inject('endpoint'),
    name: uniqueName(name),
  });
};

/**
 * The ingest bundle alone in a directory of its own, with a probe that loads it, runs `before`
 * (given where the deployed bundle is and its copy), then one invocation with no configuration in
 * the environment, which throws a ConfigError, handed to `onError`. `run` starts the probe in a
 * fresh process with only PATH and `env`, as deployed (no NODE_OPTIONS).
 */
const unconfiguredIngest = async (
  name: string,
  o: {
    before?: (bundle: { deployed: string; copy: string }) => string;
    onError: string;
  },
) => {
  const fn = functionOf(await ownCopy(name), 'IngestFunctionName');
  const dir = mkdtempSync(join(tmpdir(), `onceflow-${name}-`));
  const copy = join(dir, 'index.mjs');
  copyFileSync(fn.handlerFile, copy);
  const probe = join(dir, 'probe.mjs');
  writeFileSync(
    probe,
    `const { handler } = await import(${JSON.stringify(copy)});
${o.before?.({ deployed: fn.handlerFile, copy }) ?? ''}
await handler({ Records: [] }, {}).then(() => { throw new Error('no error'); }, ${o.onError});`,
  );
  const run = async (env: Record<string, string>) => {
    const result = await runProcess(process.execPath, [probe], {
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    expect(result.code, result.stderr).toBe(0);
    return result;
  };
  return { fn, dir, run };
};

describe('the deployed bundles', () => {
  it('load and run their first invocation in a fresh process with no node_modules, each under the size budget', async () => {
    const copy = await ownCopy('bundles');
    const work = mkdtempSync(join(tmpdir(), 'onceflow-bundles-'));
    const [ingestRecord] = firstEvent('IngestOrders', copy, 0).Records;
    const batch = parseBatch(ingestRecord?.body ?? '');
    // Ingest first: the aggregate invocation recomputes the hour that batch wrote.
    for (const [name, output, environment] of [
      ['IngestOrders', 'IngestFunctionName', copy.ingestEnvironment],
      ['AggregateHours', 'AggregateFunctionName', copy.aggregateEnvironment],
    ] as const) {
      const dir = join(work, name);
      mkdirSync(dir);
      const fn = functionOf(copy, output);
      const source = readFileSync(fn.handlerFile, 'utf8');
      // node:http comes through require(): an ES module import of it would load undici too.
      expect(source, name).not.toMatch(/from\s*"node:http"|import\("node:http"\)/);
      // Only the S3 operations it calls: the schemas of the others are left out (literal keys,
      // infra/bundling/schema-keys.ts), as they were not before.
      expect(source, name).toContain('x-id=PutObject');
      expect(source, name).not.toMatch(/SelectObjectContent|PutBucketLifecycleConfiguration/);
      const run = await runFresh({
        fn,
        environment,
        event:
          name === 'IngestOrders'
            ? toSqsEvent(ingestRecord ? [ingestRecord] : [])
            : firstEvent(name, copy, 0),
        dir,
      });
      expect(run.bundleBytes, name).toBeLessThan(BUNDLE_BUDGET_BYTES);
    }
    // What the two invocations did: the batch applied, its hour published.
    const hour = await adminClients(inject('endpoint'), LOCAL_REGION).s3.send(
      new GetObjectCommand({
        Bucket: copy.outputs.BucketName,
        Key: hourObjectKey('2026-10-01T00:00:00Z'),
      }),
    );
    const [expected] = referenceModel([batch]).hourly;
    expect(JSON.parse(await (hour.Body?.transformToString() ?? ''))).toMatchObject({
      hour: expected?.hour,
      events: expected?.events,
    });
  });

  it('maps a stack trace to source files and function names when first formatted, reading the map only then, and leaves it unmapped when there is none', async () => {
    // The map arrives after the bundle has loaded: a map read at load would be missed. With
    // `MAP=none` it never arrives.
    const { dir, run } = await unconfiguredIngest('stacks', {
      before: ({ deployed, copy }) => `if (process.env.MAP !== 'none')
  (await import('node:fs')).copyFileSync(${JSON.stringify(`${deployed}.map`)}, ${JSON.stringify(`${copy}.map`)});`,
      onError: '(e) => console.log(e.stack)',
    });
    const trace = async (map: 'late' | 'none') => {
      const { stdout } = await run({ POWERTOOLS_LOG_LEVEL: 'SILENT', MAP: map });
      expect(stdout).toMatch(/^ConfigError: invalid configuration: TABLE_NAME: is required/);
      return stdout.split('\n').filter((l) => l.startsWith('    at '));
    };
    const mapped = await trace('late');
    // The throwing frame, named and placed as in the source.
    expect(mapped[0]).toMatch(/^ {4}at [A-Za-z]\w+ \(shared\/config\.ts:\d+:\d+\)$/);
    expect(mapped.some((f) => /\(functions\/ingest-orders\.ts:\d+:\d+\)$/.test(f))).toBe(true);
    // Nothing left pointing into the minified bundle.
    expect(mapped.filter((f) => f.includes('index.mjs'))).toEqual([]);
    // No map at all: the same trace, unmapped, rather than an error in place of the error.
    rmSync(join(dir, 'index.mjs.map'));
    const unmapped = await trace('none');
    expect(unmapped).toHaveLength(mapped.length);
    expect(unmapped[0]).toMatch(/\(file:\/\/.*\/index\.mjs:\d+:\d+\)$/);
  });

  it('logs what a failed invocation warns as structured lines at the level configured, and nothing when SILENT', async () => {
    // No configuration: the invocation fails before it counts anything, so Powertools' metrics
    // warn that there is no metric to publish.
    const { run } = await unconfiguredIngest('warnings', { onError: '() => {}' });
    const output = async (level: string) => {
      const { stdout, stderr } = await run({ POWERTOOLS_LOG_LEVEL: level });
      return `${stdout}${stderr}`.split('\n').filter((line) => line.trim() !== '');
    };
    expect(await output('SILENT')).toEqual([]);
    const warned = (await output('WARN')).map(
      (line) => JSON.parse(line) as Record<string, unknown>,
    );
    expect(warned).toContainEqual(
      expect.objectContaining({
        level: 'WARN',
        message: expect.stringMatching(/^No application metrics/),
      }),
    );
  });
});
