/**
 * Bundles one function's handler into `index.mjs` (and its map) with esbuild, or copies the
 * bundle built from the same inputs before (`bundle-cache.ts`). Run as a child process by each
 * function's asset (`bundled-function.ts`): CDK's local bundling is synchronous, and esbuild
 * runs plugins only from its asynchronous API.
 *
 *   node infra/bundling/bundle.ts '{"entry": "...", "outdir": "...", "external": [...]}'
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BuildOptions, Plugin } from 'esbuild';
import * as v from 'valibot';
import { cachedBuild } from './bundle-cache.ts';
import { EAGER_IMPORTERS, eagerImports } from './eager-imports.ts';
import { literalSchemaKeys, SCHEMA_MODULES } from './schema-keys.ts';

const BundleRequestSchema = v.strictObject({
  /** The handler file (exports `handler`). */
  entry: v.string(),
  /** Where `index.mjs` and `index.mjs.map` are written. */
  outdir: v.string(),
  /** Modules left to the runtime (the AWS SDK's, when not bundled) or never loaded. */
  external: v.array(v.string()),
});
export type BundleRequest = v.InferOutput<typeof BundleRequestSchema>;

/** node:http through require(), not an ES module facade (see the shim for why). */
const NODE_HTTP_SHIM = join(import.meta.dirname, 'node-http.mjs');

/** Maps the bundle's stack traces to source lines when first formatted (see the file for why). */
const STACK_TRACES = join(import.meta.dirname, 'stack-traces.ts');

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

/** The tracer's modules, left out of bundles that do not trace (nothing imports them then). */
const TRACER_MODULES = ['@aws-lambda-powertools/tracer', '@aws-lambda-powertools/tracer/*'];

/** The modules a function's bundle leaves out. */
export const externalModules = (o: {
  /** Bundle the AWS SDK rather than load the runtime's copy. */
  readonly bundleAwsSdk: boolean;
  /** Whether the function traces (else the tracer is never loaded). */
  readonly tracing: boolean;
}): string[] => [
  ...(o.bundleAwsSdk ? UNUSED_CREDENTIAL_PROVIDERS : ['@aws-sdk/*']),
  ...(o.tracing ? [] : TRACER_MODULES),
];

/** A plugin that rewrites the text of the modules whose path matches `filter` as it loads them. */
const rewriting = (name: string, filter: RegExp, rewrite: (source: string) => string): Plugin => ({
  name,
  setup(b) {
    b.onLoad({ filter }, async ({ path }) => ({
      contents: rewrite(await readFile(path, 'utf8')),
      loader: 'js',
    }));
  },
});

/** The esbuild options of a function's bundle: one ES module for Node 24, minified. */
export const bundleOptions = (request: BundleRequest): BuildOptions => ({
  entryPoints: [request.entry],
  outfile: join(request.outdir, 'index.mjs'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  minify: true,
  sourcemap: true,
  // Mappings only: stack traces need no more, and embedded sources would triple the map.
  sourcesContent: false,
  // The ES module entry points: what tree-shaking can see through.
  mainFields: ['module', 'main'],
  external: request.external,
  // Some dependencies are CommonJS and call require(): give ESM bundles one.
  banner: {
    js: "import { createRequire as __onceflowRequire } from 'node:module'; const require = __onceflowRequire(import.meta.url);",
  },
  // Stack traces mapped on demand rather than by --enable-source-maps at every load.
  inject: [STACK_TRACES],
  alias: { 'node:http': NODE_HTTP_SHIM, http: NODE_HTTP_SHIM },
  // What the SDK's generated and lazily loaded code keeps from esbuild's tree-shaking and plain
  // module initialization (see each plugin).
  plugins: [
    rewriting('onceflow-literal-schema-keys', SCHEMA_MODULES, literalSchemaKeys),
    rewriting('onceflow-eager-imports', EAGER_IMPORTERS, eagerImports),
  ],
  logLevel: 'warning',
});

/** esbuild's failure, once it has printed each error with its place in the source. */
const isBuildFailure = (error: unknown) =>
  error instanceof Error && Array.isArray((error as { errors?: unknown }).errors);

if (import.meta.main) {
  const request = v.parse(BundleRequestSchema, JSON.parse(process.argv[2] ?? ''));
  try {
    await cachedBuild(bundleOptions(request), request.outdir);
  } catch (error) {
    // The errors are on stderr already, each with its source line; a stack of esbuild's own
    // frames after them would only push them out of sight.
    if (!isBuildFailure(error)) throw error;
    process.exitCode = 1;
  }
}
