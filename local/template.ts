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
/** A template's resources as `[logicalId, resource]` pairs (`Object.entries(Resources)`). */
export type ResourceEntries = readonly [
  string,
  { readonly Type: string; readonly Properties?: unknown },
][];

/** A template value as an object, or an empty one (a property that is absent or of another shape). */
export const asRecord = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

/** Deterministic local names, like CloudFormation's `<stack>-<logicalId>-<suffix>` without the suffix. */
export const physicalName = (stackName: string, logicalId: string, max: number) =>
  `${stackName}-${logicalId}`.slice(0, max);

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

/** Each supported function's argument, as CloudFormation documents it. */
const INTRINSICS = {
  Ref: { shape: 'a logical id', schema: v.string() },
  'Fn::GetAtt': {
    shape: '[logicalId, attribute] or "logicalId.attribute"',
    schema: v.union([v.tuple([v.string(), v.string()]), v.pipe(v.string(), v.includes('.'))]),
  },
  'Fn::Join': { shape: '[delimiter, [values]]', schema: v.tuple([v.string(), v.unknown()]) },
  'Fn::Select': {
    shape: '[index, [values]]',
    schema: v.tuple([
      v.union([
        v.pipe(v.number(), v.integer(), v.minValue(0)),
        v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number)),
      ]),
      v.unknown(),
    ]),
  },
  'Fn::Split': { shape: '[delimiter, text]', schema: v.tuple([v.string(), v.unknown()]) },
  'Fn::Sub': {
    shape: 'text or [text, {variables}]',
    schema: v.union([
      v.pipe(
        v.string(),
        v.transform((text): [string, Record<string, unknown>] => [text, {}]),
      ),
      v.tuple([v.string(), v.record(v.string(), v.unknown())]),
    ]),
  },
} as const;

type Intrinsic = keyof typeof INTRINSICS;

/** The function's argument, validated; a template that gives another shape is named with it. */
const argumentOf = <K extends Intrinsic>(
  fn: K,
  arg: unknown,
): v.InferOutput<(typeof INTRINSICS)[K]['schema']> => {
  const { shape, schema } = INTRINSICS[fn];
  const result = v.safeParse(schema, arg);
  if (!result.success)
    throw new UnresolvableError(
      `${fn} takes ${shape}, not ${JSON.stringify(arg)?.slice(0, 200) ?? String(arg)}`,
    );
  return result.output;
};

/** What a function's list argument resolved to, which must be a list. */
const resolvedList = (fn: Intrinsic, value: unknown, ctx: ResolveContext): unknown[] => {
  const resolved = resolve(value, ctx);
  if (!Array.isArray(resolved))
    throw new UnresolvableError(
      `${fn} needs a list of values; its argument resolved to ${JSON.stringify(resolved)?.slice(0, 200)}`,
    );
  return resolved;
};

/** `logicalId.attribute`: the attribute may itself hold dots (`Endpoint.Address`). */
const splitAttribute = (name: string): [string, string | undefined] => {
  const dot = name.indexOf('.');
  return dot < 0 ? [name, undefined] : [name.slice(0, dot), name.slice(dot + 1)];
};

/** Resolves Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select and Fn::Split, recursively. */
export const resolve = (value: unknown, ctx: ResolveContext): unknown => {
  if (Array.isArray(value)) return value.map((item) => resolve(item, ctx));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  const [key, arg] = entries[0] ?? [];
  if (entries.length === 1 && key !== undefined) {
    if (key === 'Ref') return lookup(ctx, argumentOf('Ref', arg));
    if (key === 'Fn::GetAtt') {
      const getAtt = argumentOf('Fn::GetAtt', arg);
      const [id, attribute] = typeof getAtt === 'string' ? splitAttribute(getAtt) : getAtt;
      return lookup(ctx, id, attribute);
    }
    if (key === 'Fn::Join') {
      const [separator, list] = argumentOf('Fn::Join', arg);
      return resolvedList(key, list, ctx).map(String).join(separator);
    }
    if (key === 'Fn::Select') {
      const [index, list] = argumentOf('Fn::Select', arg);
      const values = resolvedList(key, list, ctx);
      if (index >= values.length)
        throw new UnresolvableError(
          `Fn::Select index ${index} is past the end of a list of ${values.length}`,
        );
      return values[index];
    }
    if (key === 'Fn::Split') {
      const [separator, text] = argumentOf('Fn::Split', arg);
      return String(resolve(text, ctx)).split(separator);
    }
    if (key === 'Fn::Sub') {
      const [text, vars] = argumentOf('Fn::Sub', arg);
      const resolvedVars = new Map(Object.entries(vars).map(([k, x]) => [k, resolve(x, ctx)]));
      // `${!Literal}` is written as `${Literal}`, untouched.
      return text.replace(/\$\{(!?)([^}]+)\}/g, (_, literal: string, name: string) => {
        if (literal) return `\${${name}}`;
        if (resolvedVars.has(name)) return String(resolvedVars.get(name));
        const [id, attribute] = splitAttribute(name);
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
