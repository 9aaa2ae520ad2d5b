#!/usr/bin/env node
/**
 * `onceflow`: the operator CLI (its commands: `main.ts`). Node's compile cache is turned on
 * before anything else loads: V8's compiled code for the CLI's modules (the AWS SDK's hundreds
 * of files among them) and the type-stripped text of its TypeScript are kept on disk, in the
 * directory `NODE_COMPILE_CACHE` names or else the system's temporary one, so every run after
 * the first starts in about half the time. Where the cache cannot be read or written, Node
 * compiles as usual.
 *
 * This one file is JavaScript because it runs before the cache is on: as TypeScript, Node would
 * load its type stripper (a WebAssembly module) for it alone at every start, about 100 ms of
 * each run; with every other module's stripped text cached, the stripper is never loaded.
 */
// The module itself, not a named import: an older Node lacks the export and would fail to link
// this file before the version check could run.
import module from 'node:module';
import { requireNode24 } from '../local/node-version.mjs';

requireNode24('onceflow');
module.enableCompileCache();
const { cliFor } = await import('./main.ts');
await (await cliFor(process.argv.slice(2))).parseAsync();
