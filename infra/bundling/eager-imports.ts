/**
 * The AWS SDK's dynamic import of its own event-stream serde made static, so that esbuild
 * initializes the SDK's modules as plain module code.
 *
 * `HttpProtocol` loads the serde with `await import("@smithy/core/event-streams")`, for operations
 * with event streams (which onceflow never calls). In a bundle, a dynamically imported module is
 * initialized on demand, and so is every module it imports: esbuild wraps each of them (about 180
 * of `@smithy/core`'s, most of the SDK's core) in a lazy initializer, a closure that V8 skims with
 * the bundle and parses again in full at its first call, its module-level bindings kept in a
 * closure's context. Imported statically, the serde (about 8 KB) is evaluated at init like the
 * rest, and nothing is wrapped (README, "Cold start"). A module without that import passes
 * unchanged.
 */
/** The specifiers imported dynamically that are made static. */
const EAGER_SPECIFIERS = ['@smithy/core/event-streams'] as const;

/** `source` with `await import("<specifier>")` of each eager specifier replaced by a static import. */
export const eagerImports = (source: string): string => {
  let result = source;
  EAGER_SPECIFIERS.forEach((specifier, i) => {
    const dynamic = `await import(${JSON.stringify(specifier)})`;
    if (!result.includes(dynamic)) return;
    const binding = `__onceflowEager${i}`;
    result = `import * as ${binding} from ${JSON.stringify(specifier)};\n${result.replaceAll(dynamic, binding)}`;
  });
  return result;
};

/** Where the SDK imports an eager specifier dynamically. */
export const EAGER_IMPORTERS =
  /[\\/]@smithy[\\/]core[\\/]dist-es[\\/]submodules[\\/]protocols[\\/]HttpProtocol\.js$/;
