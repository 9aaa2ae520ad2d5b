/**
 * Reading a synthesized CDK stack (cloud assembly) and resolving the intrinsic functions its
 * templates use, against the physical names and attributes of locally provisioned resources.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The cloud assembly has no such stack (or several, and none was named). */
export class UnknownStackError extends Error {
  override readonly name = 'UnknownStackError';
}

import * as v from 'valibot';

const ResourceSchema = v.object({
  Type: v.string(),
  Properties: v.optional(v.record(v.string(), v.unknown()), {}),
  Metadata: v.optional(v.record(v.string(), v.unknown()), {}),
  DependsOn: v.optional(v.union([v.string(), v.array(v.string())])),
});
const TemplateSchema = v.object({
  Resources: v.record(v.string(), ResourceSchema),
  Outputs: v.optional(v.record(v.string(), v.object({ Value: v.unknown() })), {}),
});
const ManifestSchema = v.object({
  artifacts: v.record(
    v.string(),
    v.object({
      type: v.string(),
      properties: v.optional(v.object({ templateFile: v.optional(v.string()) })),
    }),
  ),
});

export type Resource = v.InferOutput<typeof ResourceSchema>;
export type Template = v.InferOutput<typeof TemplateSchema>;

export interface StackTemplate {
  readonly stackName: string;
  /** The cloud assembly directory (cdk.out): asset paths are relative to it. */
  readonly assemblyDir: string;
  readonly template: Template;
}

/** The CloudFormation stacks of a cloud assembly. */
export const listStacks = (assemblyDir: string): string[] => {
  const manifest = v.parse(
    ManifestSchema,
    JSON.parse(readFileSync(join(assemblyDir, 'manifest.json'), 'utf8')),
  );
  return Object.entries(manifest.artifacts)
    .filter(([, a]) => a.type === 'aws:cloudformation:stack')
    .map(([name]) => name);
};

export const loadStack = (assemblyDir: string, stackName?: string): StackTemplate => {
  const manifest = v.parse(
    ManifestSchema,
    JSON.parse(readFileSync(join(assemblyDir, 'manifest.json'), 'utf8')),
  );
  const stacks = Object.entries(manifest.artifacts).filter(
    ([, a]) => a.type === 'aws:cloudformation:stack',
  );
  const found = stackName
    ? stacks.find(([name]) => name === stackName)
    : stacks.length === 1
      ? stacks[0]
      : undefined;
  if (!found) {
    const names = stacks.map(([n]) => n).join(', ') || 'none';
    throw new UnknownStackError(
      stackName
        ? `no stack ${stackName} in ${assemblyDir} (found: ${names})`
        : `choose a stack: ${names}`,
    );
  }
  const [name, artifact] = found;
  const file = artifact.properties?.templateFile ?? `${name}.template.json`;
  const template = v.parse(
    TemplateSchema,
    JSON.parse(readFileSync(join(assemblyDir, file), 'utf8')),
  );
  return { stackName: name, assemblyDir, template };
};

/** What a provisioned resource answers to `Ref` and `Fn::GetAtt`. */
export interface PhysicalResource {
  readonly ref: string;
  readonly attributes: Readonly<Record<string, string>>;
}

export interface ResolveContext {
  readonly region: string;
  readonly accountId: string;
  readonly stackName: string;
  readonly resources: ReadonlyMap<string, PhysicalResource>;
}

export class UnresolvableError extends Error {
  override readonly name = 'UnresolvableError';
}

const pseudo = (name: string, ctx: ResolveContext): string | undefined =>
  ({
    'AWS::Region': ctx.region,
    'AWS::AccountId': ctx.accountId,
    'AWS::Partition': 'aws',
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': ctx.stackName,
    'AWS::NoValue': undefined,
  })[name];

const lookup = (ctx: ResolveContext, id: string, attribute?: string): string => {
  if (attribute === undefined) {
    const p = pseudo(id, ctx);
    if (p !== undefined) return p;
  }
  const resource = ctx.resources.get(id);
  if (!resource) throw new UnresolvableError(`${id} is not provisioned locally`);
  if (attribute === undefined) return resource.ref;
  const value = resource.attributes[attribute];
  if (value === undefined)
    throw new UnresolvableError(`${id} has no attribute ${attribute} locally`);
  return value;
};

/** Resolves Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select and Fn::Split, recursively. */
export const resolve = (value: unknown, ctx: ResolveContext): unknown => {
  if (Array.isArray(value)) return value.map((item) => resolve(item, ctx));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  const [key, arg] = entries[0] ?? [];
  if (entries.length === 1 && key !== undefined) {
    if (key === 'Ref') return lookup(ctx, String(arg));
    if (key === 'Fn::GetAtt') {
      const [id, attribute] = Array.isArray(arg) ? arg : String(arg).split('.');
      return lookup(ctx, String(id), String(attribute));
    }
    if (key === 'Fn::Join') {
      const [sep, parts] = arg as [string, unknown[]];
      return (resolve(parts, ctx) as unknown[]).map(String).join(sep);
    }
    if (key === 'Fn::Select') {
      const [index, list] = arg as [number | string, unknown];
      return (resolve(list, ctx) as unknown[])[Number(index)];
    }
    if (key === 'Fn::Split') {
      const [sep, text] = arg as [string, unknown];
      return String(resolve(text, ctx)).split(sep);
    }
    if (key === 'Fn::Sub') {
      const [text, vars = {}] =
        typeof arg === 'string' ? [arg, {}] : (arg as [string, Record<string, unknown>]);
      const resolvedVars = resolve(vars, ctx) as Record<string, unknown>;
      return text.replace(/\$\{([^}!]+)\}/g, (_, name: string) => {
        if (name in resolvedVars) return String(resolvedVars[name]);
        const [id = '', attribute] = name.split('.');
        return lookup(ctx, id, attribute);
      });
    }
    if (key.startsWith('Fn::')) throw new UnresolvableError(`${key} is not supported locally`);
  }
  return Object.fromEntries(entries.map(([k, item]) => [k, resolve(item, ctx)]));
};

/** Logical ids a value refers to (to provision in dependency order). */
export const referencesOf = (value: unknown): string[] => {
  if (Array.isArray(value)) return value.flatMap(referencesOf);
  if (typeof value !== 'object' || value === null) return [];
  const found: string[] = [];
  for (const [key, arg] of Object.entries(value)) {
    if (key === 'Ref' && typeof arg === 'string' && !arg.startsWith('AWS::')) found.push(arg);
    else if (key === 'Fn::GetAtt')
      found.push(String(Array.isArray(arg) ? arg[0] : String(arg).split('.')[0]));
    else if (key === 'Fn::Sub') {
      const text = typeof arg === 'string' ? arg : Array.isArray(arg) ? String(arg[0]) : '';
      for (const m of text.matchAll(/\$\{([^}.!]+)/g))
        if (m[1] && !m[1].startsWith('AWS::')) found.push(m[1]);
      if (Array.isArray(arg)) found.push(...referencesOf(arg[1]));
    } else found.push(...referencesOf(arg));
  }
  return found;
};
