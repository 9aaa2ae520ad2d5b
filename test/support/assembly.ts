import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, type Stack } from 'aws-cdk-lib';
import { OnceflowStack } from '../../infra/onceflow-stack.ts';
import { readSettings } from '../../infra/settings.ts';
import { uniqueName } from './names.ts';

/**
 * Synthesizes a stack in-process into a fresh cloud assembly inside the project (so the bundles'
 * external AWS SDK resolves from its node_modules, as the Lambda runtime provides it on AWS).
 * Without CDK's CloudFormation validation: the stack tests validate every variant of the
 * template, and the validator's engine took 3.5 s of CPU in each process that synthesized.
 */
export const synthAssembly = (build: (app: App, stackName: string) => Stack = defaultStack) => {
  const stackName = uniqueName('onceflow');
  const outdir = join(import.meta.dirname, '..', '..', '.onceflow', 'test-assemblies', stackName);
  mkdirSync(outdir, { recursive: true });
  const app = new App({ outdir, builtinCloudFormationValidation: false });
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

/**
 * A cloud assembly written by hand, laid out as `cdk synth` lays it out: a new directory under
 * `parent` with the manifest, the stack's template, and each asset (`asset.<name>/index.mjs`,
 * what a function's `aws:asset:path` metadata names) holding the given code.
 */
export const writeHandAssembly = (
  parent: string,
  stackName: string,
  template: Record<string, unknown>,
  assets: Readonly<Record<string, string>> = {},
): string => {
  const dir = mkdtempSync(join(parent, 'assembly-'));
  for (const [asset, code] of Object.entries(assets)) {
    mkdirSync(join(dir, asset));
    writeFileSync(join(dir, asset, 'index.mjs'), code);
  }
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      artifacts: {
        [stackName]: {
          type: 'aws:cloudformation:stack',
          properties: { templateFile: `${stackName}.template.json` },
        },
      },
    }),
  );
  writeFileSync(join(dir, `${stackName}.template.json`), JSON.stringify(template));
  return dir;
};

/** An alarm on one of Lambda's metrics of the function `Fn`, for a hand-written assembly. */
export const lambdaAlarmResource = (
  metric: string,
  threshold: number,
  more: Readonly<Record<string, unknown>> = {},
) => ({
  Type: 'AWS::CloudWatch::Alarm',
  Properties: {
    MetricName: metric,
    Namespace: 'AWS/Lambda',
    Statistic: 'Sum',
    Dimensions: [{ Name: 'FunctionName', Value: { Ref: 'Fn' } }],
    Period: 60,
    EvaluationPeriods: 1,
    Threshold: threshold,
    ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    TreatMissingData: 'notBreaching',
    ...more,
  },
});
