#!/usr/bin/env node
/**
 * `npm start` (its work: `start.ts`). As for the CLI (`cli/onceflow.mjs`), Node's compile cache
 * is turned on before anything else loads, so a start after the first reuses V8's compiled code
 * and the type-stripped text of every module; and this one file is JavaScript, so Node's type
 * stripper (a WebAssembly module) never loads. `npm start -- --help`: 0.66 → 0.45 s.
 */
// The module itself, not a named import: an older Node lacks the export and would fail to link
// this file before the version check could run.
import module from 'node:module';
import { requireNode24 } from './node-version.mjs';

requireNode24('npm start');
module.enableCompileCache();
await import('./start.ts');
