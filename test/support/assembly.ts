import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { App, type Stack } from 'aws-cdk-lib';
import { OnceflowStack } from '../../infra/onceflow-stack.ts';
import { readSettings } from '../../infra/settings.ts';
import { uniqueName } from './names.ts';

/**
 * Synthesizes a stack in-process into a fresh cloud assembly inside the project (so the bundles'
 * external AWS SDK resolves from its node_modules, as the Lambda runtime provides it on AWS).
 */
export const synthAssembly = (build: (app: App, stackName: string) => Stack = defaultStack) => {
  const stackName = uniqueName('onceflow');
  const outdir = join(import.meta.dirname, '..', '..', '.onceflow', 'test-assemblies', stackName);
  mkdirSync(outdir, { recursive: true });
  const app = new App({ outdir });
  const stack = build(app, stackName);
  const assembly = app.synth();
  return {
    assemblyDir: assembly.directory,
    stackName,
    template: assembly.getStackByName(stack.stackName).template as Record<string, unknown>,
    remove: () => rmSync(outdir, { recursive: true, force: true }),
  };
};

const defaultStack = (app: App, stackName: string) =>
  new OnceflowStack(app, stackName, { settings: readSettings(() => undefined) });
