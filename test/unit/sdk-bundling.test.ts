import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bundleOptions, externalModules } from '../../infra/bundling/bundle.ts';
import { eagerImports } from '../../infra/bundling/eager-imports.ts';
import { literalSchemaKeys } from '../../infra/bundling/schema-keys.ts';
import { runProcess } from '../../local/process.ts';

/** Runs a module body (no imports or exports) and returns the value of `S`. */
const evaluate = (source: string): unknown => new Function(`${source}\nreturn S;`)();

describe('literal keys in the AWS SDK’s generated schemas', () => {
  it('writes a computed key naming a string constant as that string, as the generator’s fix does', () => {
    const source = [
      'const _hH = "httpHeader";',
      'const _xN = "xmlName";',
      'const n0 = "com.amazonaws.s3";',
      'var S = [3, n0, "PutObjectRequest", 0, [{ [_hH]: "x-amz-acl", [_xN]: "ACL" }]];',
    ].join('\n');
    const folded = literalSchemaKeys(source);
    expect(folded).toContain('{ "httpHeader": "x-amz-acl", "xmlName": "ACL" }');
    expect(folded).not.toMatch(/\[_\w+\]:/);
    expect(evaluate(folded)).toEqual(evaluate(source));
  });

  it('leaves a key computed when it could change meaning written literally, or is no constant', () => {
    const source = [
      // A literal "__proto__" key would set the prototype instead of defining a property.
      'const _p = "__proto__";',
      // Bound twice: which binding a key names depends on the scope.
      'const _d = "outer";',
      'function f() { const _d = "inner"; return { [_d]: 1 }; }',
      'let _n = 7;',
      'var S = [{ [_p]: 1 }, f(), { [_n]: 2 }, { [_u]: 3 }, true ? [_p]: 0];',
      'var _u = "late";',
    ].join('\n');
    expect(literalSchemaKeys(source)).toBe(source);
  });

  it('returns a module without computed keys unchanged', () => {
    const source = 'const _a = "a";\nvar S = [{ "a": _a }];';
    expect(literalSchemaKeys(source)).toBe(source);
  });

  it('gives objects equal to the original’s for any table of constants and keys', () => {
    const name = fc.stringMatching(/^_[A-Za-z][A-Za-z0-9]{0,3}$/);
    const value = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom('__proto__', 'constructor', 'toString', '0', '1e3', 'a"b', 'a\\b', '\u2028'),
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(name, value), { selector: ([n]) => n, minLength: 1 }),
        fc.array(fc.array(fc.nat(), { maxLength: 5 }), { maxLength: 5 }),
        (table, objects) => {
          const names = table.map(([n]) => n);
          const source = [
            ...table.map(([n, s]) => `const ${n} = ${JSON.stringify(s)};`),
            `var S = [${objects
              .map(
                (keys) =>
                  `{ ${keys.map((k, i) => `[${names[k % names.length]}]: ${i}`).join(', ')} }`,
              )
              .join(', ')}];`,
          ].join('\n');
          const folded = literalSchemaKeys(source);
          const [before, after] = [evaluate(source), evaluate(folded)];
          expect(after).toEqual(before);
          // Own properties and prototypes alike: `toEqual` alone would not tell a prototype set.
          expect((after as object[]).map((o) => Object.getPrototypeOf(o))).toEqual(
            (before as object[]).map((o) => Object.getPrototypeOf(o)),
          );
          expect((after as object[]).map((o) => Object.getOwnPropertyNames(o))).toEqual(
            (before as object[]).map((o) => Object.getOwnPropertyNames(o)),
          );
        },
      ),
    );
  });
});

describe('the SDK’s dynamic import of its event-stream serde', () => {
  it('becomes a static namespace import, every use of it replaced', () => {
    const source = [
      'export class HttpProtocol {',
      '  async serde() {',
      '    const { EventStreamSerde } = await import("@smithy/core/event-streams");',
      '    return EventStreamSerde;',
      '  }',
      '}',
    ].join('\n');
    const eager = eagerImports(source);
    expect(eager.split('\n')[0]).toBe(
      'import * as __onceflowEager0 from "@smithy/core/event-streams";',
    );
    expect(eager).toContain('const { EventStreamSerde } = __onceflowEager0;');
    expect(eager).not.toContain('import(');
    expect(eagerImports('const http = await import("node:http");')).toBe(
      'const http = await import("node:http");',
    );
  });

  it('leaves no module of the SDK lazily initialized in a function’s bundle, nor an unused S3 operation', async () => {
    const outdir = mkdtempSync(join(tmpdir(), 'onceflow-bundle-'));
    try {
      // Unminified, so that esbuild's lazy initializers keep their names and module paths.
      await build({
        ...bundleOptions({
          entry: join(import.meta.dirname, '..', '..', 'functions', 'aggregate-hours.ts'),
          outdir,
          external: externalModules({ bundleAwsSdk: true, tracing: false }),
        }),
        minify: false,
        sourcemap: false,
      });
      const bundle = readFileSync(join(outdir, 'index.mjs'), 'utf8');
      expect(bundle).toContain('node_modules/@smithy/core/dist-es/submodules/event-streams/');
      expect(bundle).not.toMatch(/__esm\(\{\s*"node_modules\/@(smithy|aws-sdk)\//);
      expect(bundle).not.toContain('SelectObjectContent');
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});

describe('a function that does not build', () => {
  it('prints esbuild’s error with its source line and exits 1, with no stack after it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'onceflow-bad-bundle-'));
    try {
      const entry = join(dir, 'handler.ts');
      writeFileSync(entry, 'export const handler = async () => ;\n');
      const run = await runProcess(process.execPath, [
        join(import.meta.dirname, '..', '..', 'infra', 'bundling', 'bundle.ts'),
        JSON.stringify({ entry, outdir: join(dir, 'out'), external: [] }),
      ]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('✘ [ERROR] Unexpected ";"');
      expect(run.stderr).toContain('handler.ts:1:35:');
      expect(run.stderr).not.toMatch(/\n\s+at /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
