/**
 * `UpdateFunctionConfiguration` on the edge, for what an operator changes by hand during an
 * incident: a function's environment variables (a log level, a setting) and its timeout. The
 * change takes effect as on Lambda: invocations running now finish with the old configuration,
 * every later one starts in a fresh environment with the new one. Any other field is refused by
 * name, not ignored.
 */
import type { ServerResponse } from 'node:http';
import * as v from 'valibot';
import { environmentRefusal, LAMBDA_MAX_TIMEOUT_MS } from './lambda-quotas.ts';
import { error, parseJson } from './lambda-rest.ts';
import type { LocalFunction } from './provision.ts';

/** What a function's configuration may change to locally. */
export interface ConfigurationChange {
  readonly environment?: Readonly<Record<string, string>>;
  readonly timeoutSeconds?: number;
}

const UpdateSchema = v.strictObject({
  // As on Lambda, the variables given replace all of them; none given, none are left.
  Environment: v.optional(
    v.strictObject({ Variables: v.optional(v.record(v.string(), v.string())) }),
  ),
  Timeout: v.optional(v.pipe(v.number(), v.integer())),
});

/**
 * Validates the body of `PUT /2015-03-31/functions/{name}/configuration` as Lambda does, and
 * answers its refusal; or returns the change to apply.
 */
export const configurationChange = (
  res: ServerResponse,
  body: string,
): ConfigurationChange | undefined => {
  const parsed = parseJson(body, {});
  const input = v.safeParse(UpdateSchema, parsed?.value);
  if (!input.success) {
    error(
      res,
      400,
      'InvalidParameterValueException',
      `The local runtime changes only the Environment and Timeout of a function's configuration: ${v.summarize(input.issues)}`,
    );
    return undefined;
  }
  const { Environment, Timeout } = input.output;
  const maxS = LAMBDA_MAX_TIMEOUT_MS / 1000;
  if (Timeout !== undefined && (Timeout < 1 || Timeout > maxS)) {
    error(
      res,
      400,
      'ValidationException',
      `1 validation error detected: Value '${Timeout}' at 'timeout' failed to satisfy constraint: Member must have value ${Timeout < 1 ? 'greater than or equal to 1' : `less than or equal to ${maxS}`}`,
    );
    return undefined;
  }
  const environment = Environment && (Environment.Variables ?? {});
  const refusal = environment && environmentRefusal(environment);
  if (refusal) {
    error(res, 400, 'InvalidParameterValueException', refusal);
    return undefined;
  }
  return {
    ...(environment ? { environment } : {}),
    ...(Timeout === undefined ? {} : { timeoutSeconds: Timeout }),
  };
};

/** The function with the change applied, and Lambda's `LastModified` moved to now. */
export const reconfigured = (fn: LocalFunction, change: ConfigurationChange): LocalFunction => ({
  ...fn,
  ...change,
  lastModified: new Date().toISOString(),
});
