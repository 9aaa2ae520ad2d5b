/** Bundle size and module init time of each function, from the cloud assembly. */
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { provisionlessFunctions } from './assembly.ts';

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

/** Loads the bundle in a fresh Node process (the one running this, i.e. Node 24) `runs` times. */
export const measureInit = (file: string, runs: number): number => {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); console.log(performance.now() - t);`;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
    });
    if (out.status !== 0) throw new Error(`loading ${file} failed: ${out.stderr}`);
    times.push(Number(out.stdout.trim()));
  }
  return median(times);
};

export const measureFunctions = (assemblyDir: string, runs = 7) =>
  Object.fromEntries(
    provisionlessFunctions(assemblyDir).map((fn) => [
      fn.name,
      {
        bundleBytes: statSync(fn.handlerFile).size,
        initMs: Number(measureInit(fn.handlerFile, runs).toFixed(1)),
      },
    ]),
  );
