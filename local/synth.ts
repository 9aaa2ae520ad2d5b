/** Synthesizes the CDK app when cdk.out is missing or older than its sources. */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runProcess } from './process.ts';

/** What a synthesis is built from: a change in any of them makes cdk.out stale. */
export const SOURCES = [
  'infra',
  'functions',
  'shared',
  'adapters',
  'cdk.json',
  'package-lock.json',
];

const newestMtime = (path: string): number => {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(
    stat.mtimeMs,
    ...readdirSync(path).map((entry) => newestMtime(join(path, entry))),
  );
};

/** True when cdk.out exists and is newer than every source it is built from. */
export const assemblyIsFresh = (projectDir: string, assemblyDir: string): boolean => {
  const manifest = join(assemblyDir, 'manifest.json');
  if (!existsSync(manifest)) return false;
  const built = statSync(manifest).mtimeMs;
  return SOURCES.every((source) => newestMtime(join(projectDir, source)) <= built);
};

/** Runs `cdk synth -q` (the project's CDK CLI) and resolves when it succeeded. */
export const synthesize = async (
  projectDir: string,
  assemblyDir: string,
  context: Record<string, string> = {},
): Promise<void> => {
  const args = [
    'synth',
    '-q',
    '-o',
    assemblyDir,
    ...Object.entries(context).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
  ];
  const run = await runProcess(join(projectDir, 'node_modules', '.bin', 'cdk'), args, {
    cwd: projectDir,
  });
  if (run.code !== 0)
    throw new Error(
      `cdk synth failed (exit ${run.code}):\n${(run.stdout + run.stderr).slice(-4000)}`,
    );
};

/** The project's cloud assembly (`cdk.out`), synthesized first when missing or stale. */
export const projectAssembly = async (
  projectDir = join(import.meta.dirname, '..'),
): Promise<string> => {
  const assemblyDir = join(projectDir, 'cdk.out');
  if (!assemblyIsFresh(projectDir, assemblyDir)) await synthesize(projectDir, assemblyDir);
  return assemblyDir;
};
