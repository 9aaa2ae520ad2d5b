/** The functions of the synthesized stack, read from the template without provisioning anything. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadStack } from '../../local/template.ts';

export interface BundledFunction {
  readonly name: string;
  readonly handlerFile: string;
}

/** Functions fed by an event source mapping (the pipeline's own, not CDK's helpers). */
export const provisionlessFunctions = (assemblyDir: string): BundledFunction[] => {
  const { template } = loadStack(assemblyDir);
  const resources = Object.entries(template.Resources);
  const mapped = new Set(
    resources
      .filter(([, r]) => r.Type === 'AWS::Lambda::EventSourceMapping')
      .map(([, r]) => (r.Properties.FunctionName as { Ref?: string }).Ref ?? ''),
  );
  return resources
    .filter(([id, r]) => r.Type === 'AWS::Lambda::Function' && mapped.has(id))
    .map(([id, r]) => {
      const asset =
        r.Metadata['aws:asset:path'] ??
        `asset.${String((r.Properties.Code as { S3Key?: string }).S3Key ?? '').replace(/\.zip$/, '')}`;
      const file = ['index.mjs', 'index.js']
        .map((f) => join(assemblyDir, String(asset), f))
        .find(existsSync);
      if (!file) throw new Error(`no bundle for ${id} in ${assemblyDir}`);
      return { name: id.replace(/Function[0-9A-F]{8}$/, ''), handlerFile: file };
    });
};
