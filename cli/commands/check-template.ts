/**
 * The deployed template as `onceflow check --fix` reads it: its shape, CloudFormation's lenient
 * values (a number or a boolean given as a string), and its references (`Ref`, `Fn::GetAtt`)
 * resolved through what the running stack says of itself. Pure.
 */
import * as v from 'valibot';

export const TemplateSchema = v.object({
  Resources: v.record(
    v.string(),
    v.object({
      Type: v.string(),
      Properties: v.optional(v.record(v.string(), v.unknown()), {}),
    }),
  ),
  Outputs: v.optional(v.record(v.string(), v.object({ Value: v.unknown() })), {}),
});
export type Template = v.InferOutput<typeof TemplateSchema>;

// CloudFormation takes a number or a boolean as a string too.
export const templateNumber = v.pipe(v.union([v.number(), v.string()]), v.transform(Number));
export const templateBoolean = v.pipe(
  v.union([v.boolean(), v.picklist(['true', 'false'])]),
  v.transform((x) => x === true || x === 'true'),
);

/** What the running stack says of itself, through which the template's references resolve. */
export interface Resolved {
  /** The stack's outputs, which CloudFormation has resolved. */
  readonly outputs: Readonly<Record<string, string>>;
  /**
   * Each resource's physical id by logical id (`ListStackResources`): what its `Ref` gives.
   * Read by `--fix` only.
   */
  readonly resources?: Readonly<Record<string, string>>;
  /** ARNs by logical id: what `Fn::GetAtt [id, Arn]` gives. */
  readonly arns?: Readonly<Record<string, string>>;
}

/** What no output resolves. */
export const UNRESOLVED = Symbol('unresolved');

const isExpression = (value: object) => {
  const keys = Object.keys(value);
  return keys.length === 1 && (keys[0] === 'Ref' || keys[0]?.startsWith('Fn::') === true);
};

/**
 * Resolves a template value: an expression that an output's template value also is gives that
 * output's value; a `Ref` gives the resource's physical id, `Fn::GetAtt [id, Arn]` an ARN the
 * stack gave, and `Fn::GetAtt [queue, QueueName]` the name in the queue's URL. Anything else is UNRESOLVED, never guessed, and so is a value holding one.
 */
export const resolver = (template: Template, stack: Resolved) => {
  const byExpression = new Map<string, string>();
  for (const [id, physicalId] of Object.entries(stack.resources ?? {})) {
    byExpression.set(JSON.stringify({ Ref: id }), physicalId);
    // A queue's physical id is its URL, whose last segment is its name.
    if (template.Resources[id]?.Type === 'AWS::SQS::Queue')
      byExpression.set(
        JSON.stringify({ 'Fn::GetAtt': [id, 'QueueName'] }),
        physicalId.slice(physicalId.lastIndexOf('/') + 1),
      );
  }
  for (const [id, arn] of Object.entries(stack.arns ?? {}))
    byExpression.set(JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] }), arn);
  for (const [name, o] of Object.entries(template.Outputs)) {
    const value = stack.outputs[name];
    if (typeof o.Value === 'object' && o.Value !== null && value !== undefined)
      byExpression.set(JSON.stringify(o.Value), value);
  }
  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) {
      const items = value.map(resolve);
      return items.includes(UNRESOLVED) ? UNRESOLVED : items;
    }
    if (typeof value !== 'object' || value === null) return value;
    if (isExpression(value)) return byExpression.get(JSON.stringify(value)) ?? UNRESOLVED;
    const entries = Object.entries(value).map(([k, x]) => [k, resolve(x)] as const);
    return entries.some(([, x]) => x === UNRESOLVED) ? UNRESOLVED : Object.fromEntries(entries);
  };
  return resolve;
};

/** The logical id an output names by `Ref` (`{ "Ref": "OrdersQueue929135A0" }`). */
export const referenced = (template: Template, output: string) => {
  const value = template.Outputs[output]?.Value;
  const id = v.safeParse(v.object({ Ref: v.string() }), value);
  return id.success ? id.output.Ref : undefined;
};
export const propertiesOf = (template: Template, output: string) => {
  const id = referenced(template, output);
  return id === undefined ? undefined : template.Resources[id]?.Properties;
};

/** A scheduled rule as `PutRule` and `PutTargets` create it, from its template properties. */
export const ScheduledRuleSchema = v.object({
  Name: v.string(),
  ScheduleExpression: v.string(),
  State: v.optional(v.picklist(['ENABLED', 'DISABLED'])),
  Description: v.optional(v.string()),
  EventBusName: v.optional(v.string()),
  Targets: v.array(
    // Strict: a target setting not listed here is not re-created, so the rule is not either.
    v.strictObject({
      Id: v.string(),
      Arn: v.string(),
      Input: v.optional(v.string()),
      InputPath: v.optional(v.string()),
      RoleArn: v.optional(v.string()),
      RetryPolicy: v.optional(
        v.strictObject({
          MaximumRetryAttempts: v.optional(templateNumber),
          MaximumEventAgeInSeconds: v.optional(templateNumber),
        }),
      ),
      DeadLetterConfig: v.optional(v.strictObject({ Arn: v.string() })),
    }),
  ),
});
export type ScheduledRule = v.InferOutput<typeof ScheduledRuleSchema>;
