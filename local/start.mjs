#!/usr/bin/env node
/**
 * `npm start` (its work: `start.ts`). As for the CLI (`cli/onceflow.mjs`), Node's compile cache
 * is turned on before anything else loads, so a start after the first reuses V8's compiled code
 * and the type-stripped text of every module; and this one file is JavaScript, so Node's type
 * stripper (a WebAssembly module) never loads. `npm start -- --help`: 0.66 → 0.45 s.
 */
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('./start.ts');
