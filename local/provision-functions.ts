/**
 * A template's Lambda functions, read as Lambda would create them: named, their environments
 * resolved and held to Lambda's quotas, their bundled handlers found in the cloud assembly, and
 * how Lambda retries their asynchronous invocations. Functions the local runtime cannot run (a
 * runtime other than Node.js, a container image) are named, with the reason, not run.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AsyncInvokeConfig, asyncInvokeConfigs } from './async-config.ts';
import { environmentRefusal } from './lambda-quotas.ts';
import {
  asRecord,
  type PhysicalResource,
  physicalName,
  type ResolveContext,
  resolve,
  type StackTemplate,
} from './template.ts';

export const LOCAL_ACCOUNT = '000000000000';

export interface LocalFunction {
  readonly logicalId: string;
  readonly name: string;
  /** Its ARN, as `Fn::GetAtt [fn, Arn]` resolves and Lambda's API names it. */
  readonly arn: string;
  /** The bundled code from the cloud assembly: the exact code that would be deployed. */
  readonly handlerFile: string;
  readonly handlerExport: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
  /**
   * The SHA-256 of the bundled handler, base64, as Lambda's `CodeSha256` (Lambda hashes the zip
   * it was given; locally the handler file is the package): it changes exactly when the code does.
   */
  readonly codeSha256: string;
  /** When the runtime took this code and configuration (ISO 8601), as Lambda's `LastModified`. */
  readonly lastModified: string;
  /**
   * How Lambda retries its asynchronous invocations: its `$LATEST` event invoke config; none,
   * Lambda's defaults (`LAMBDA_ASYNC_DEFAULTS`).
   */
  readonly asyncInvoke?: AsyncInvokeConfig;
  /** Where Lambda sends an asynchronous event it discarded (`DeadLetterConfig.TargetArn`). */
  readonly deadLetterArn?: string;
  /**
   * Its `ReservedConcurrentExecutions`: at most this many invocations at once, the next ones
   * throttled. Undefined: none reserved (the account's unreserved concurrency).
   */
  readonly reservedConcurrency?: number;
}

/** `index.handler` → the bundle's `index.mjs` (or `.js`, `.cjs`) and its export `handler`. */
const handlerFileOf = (
  assemblyDir: string,
  assetPath: string,
  handler: string,
): [string, string] => {
  const dot = handler.lastIndexOf('.');
  const base = handler.slice(0, dot);
  const exported = handler.slice(dot + 1);
  for (const ext of ['.mjs', '.js', '.cjs']) {
    const file = join(assemblyDir, assetPath, `${base}${ext}`);
    if (existsSync(file)) return [file, exported];
  }
  throw new Error(`no bundled handler ${base}.{mjs,js,cjs} in ${join(assemblyDir, assetPath)}`);
};

/** Why the local runtime cannot run a function Lambda would, or undefined when it can. */
const notLocal = (properties: Record<string, unknown>): string | undefined => {
  if (properties.PackageType === 'Image') return 'a container image';
  const runtime = properties.Runtime;
  if (typeof runtime === 'string' && !runtime.startsWith('nodejs'))
    return `the ${runtime} runtime (only Node.js functions run locally)`;
  return undefined;
};

export interface TemplateFunctions {
  readonly functions: LocalFunction[];
  /** Functions the local runtime does not run, each with the reason. */
  readonly notRun: { readonly logicalId: string; readonly reason: string }[];
}

/**
 * The template's functions: named (functions are known by name and ARN before any environment
 * resolves, as they may refer to each other), their environments resolved against `physical`
 * (which gains the functions' own entries), each held to Lambda's quotas, and their bundled
 * handlers found in the assembly.
 */
export const functionsOf = (
  stack: StackTemplate,
  region: string,
  physical: Map<string, PhysicalResource>,
): TemplateFunctions => {
  const { stackName, template, assemblyDir } = stack;
  const ctx: ResolveContext = { region, accountId: LOCAL_ACCOUNT, stackName, resources: physical };
  const lastModified = new Date().toISOString();
  const functionEntries = Object.entries(template.Resources).filter(
    ([, r]) => r.Type === 'AWS::Lambda::Function',
  );
  for (const [id, resource] of functionEntries) {
    const name =
      typeof resource.Properties.FunctionName === 'string'
        ? resource.Properties.FunctionName
        : physicalName(stackName, id, 64);
    physical.set(id, {
      ref: name,
      attributes: { Arn: `arn:aws:lambda:${region}:${LOCAL_ACCOUNT}:function:${name}` },
    });
  }
  // A destination the runtime does not provision (a topic, an event bus) keeps its template
  // form: nothing local answers to it, and a delivery to it is reported, not made.
  const resolveOrKeep = (value: unknown) => {
    try {
      return resolve(value, ctx);
    } catch {
      return JSON.stringify(value);
    }
  };
  const asyncConfigs = asyncInvokeConfigs(
    Object.entries(template.Resources),
    functionEntries.map(([id]) => id),
    resolveOrKeep,
  );
  const functions: LocalFunction[] = [];
  const notRun: TemplateFunctions['notRun'] = [];
  for (const [id, resource] of functionEntries) {
    const reason = notLocal(resource.Properties);
    if (reason) {
      notRun.push({ logicalId: id, reason });
      continue;
    }
    // Asset metadata is written when the CLI synthesizes; otherwise the code's S3 key names the asset.
    const s3Key = asRecord(resource.Properties.Code).S3Key;
    const assetPath =
      resource.Metadata['aws:asset:path'] ??
      (typeof s3Key === 'string' &&
      s3Key.endsWith('.zip') &&
      existsSync(join(assemblyDir, `asset.${s3Key.slice(0, -4)}`))
        ? `asset.${s3Key.slice(0, -4)}`
        : undefined);
    const handler = resource.Properties.Handler;
    // Functions without a local asset (e.g. CDK's own providers) are not run.
    if (typeof assetPath !== 'string' || typeof handler !== 'string') continue;
    const variables = asRecord(asRecord(resource.Properties.Environment).Variables);
    const environment = Object.fromEntries(
      Object.entries(variables).map(([k, val]) => [k, String(resolve(val, ctx))]),
    );
    // Measured once resolved, as Lambda measures what CloudFormation gives it: a stack whose
    // environment would be refused on deploy fails here too, not first on AWS.
    const refusal = environmentRefusal(environment);
    if (refusal) throw new Error(`function ${id} cannot be created: ${refusal}`);
    const [handlerFile, handlerExport] = handlerFileOf(assemblyDir, assetPath, handler);
    const deadLetter = asRecord(resource.Properties.DeadLetterConfig).TargetArn;
    const reserved = resource.Properties.ReservedConcurrentExecutions;
    const local = physical.get(id);
    functions.push({
      logicalId: id,
      name: local?.ref ?? id,
      arn: local?.attributes.Arn ?? id,
      handlerFile,
      handlerExport,
      environment,
      timeoutSeconds: Number(resource.Properties.Timeout ?? 3),
      memoryMb: Number(resource.Properties.MemorySize ?? 128),
      codeSha256: createHash('sha256').update(readFileSync(handlerFile)).digest('base64'),
      lastModified,
      ...(asyncConfigs.has(id) ? { asyncInvoke: asyncConfigs.get(id) } : {}),
      ...(deadLetter === undefined ? {} : { deadLetterArn: String(resolveOrKeep(deadLetter)) }),
      ...(reserved === undefined ? {} : { reservedConcurrency: Number(resolve(reserved, ctx)) }),
    });
  }
  return { functions, notRun };
};

/**
 * The functions of `next` (another synthesis of the same app) as they would run on `running`'s
 * resources: what a running stack swaps in when only code or function settings changed. Nothing
 * is created; references resolve to the resources already provisioned.
 */
export const functionsOnRunningStack = (
  next: StackTemplate,
  running: {
    readonly stackName: string;
    readonly region: string;
    readonly physical: ReadonlyMap<string, PhysicalResource>;
  },
): LocalFunction[] =>
  functionsOf({ ...next, stackName: running.stackName }, running.region, new Map(running.physical))
    .functions;
