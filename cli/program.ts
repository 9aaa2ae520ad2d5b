import { SingleBar } from 'cli-progress';
import { Command, InvalidArgumentError, Option } from 'commander';
import * as v from 'valibot';
import { shortened, terminalSafe } from '../local/render.ts';
import { CURRENCIES, currencyExponent } from '../shared/currencies.ts';
import {
  CliError,
  DEFAULT_LOCAL_STATE,
  resolveTarget,
  type Target,
  type TargetKind,
} from './target.ts';

export const number =
  (label: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  (value: string) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max)
      throw new InvalidArgumentError(`${label} between ${min} and ${max}`);
    return n;
  };
/** A whole number within bounds (counts, limits). */
export const integer = (label: string, min: number, max: number) => (value: string) => {
  const n = number(label, min, max)(value);
  if (!Number.isInteger(n))
    throw new InvalidArgumentError(`${label}: a whole number, not ${value}`);
  return n;
};
export const rate = number('a rate', 0, 1);

/** `--in-flight n` of the commands that send bodies (`send`, `replay archive`, `replay rejects`). */
export const inFlightOption = () =>
  new Option(
    '--in-flight <n>',
    'SendMessageBatch requests at once (faster, in no particular order; default 1, in order)',
  ).argParser(number('a count', 1, 64));

/** `--rate n` of the commands that send bodies: what they hand SQS, at most, each second. */
export const rateOption = () =>
  new Option(
    '--rate <n>',
    'messages a second at most, so that a large send or replay does not flood the functions (default: as fast as SQS takes them)',
  ).argParser(number('messages a second', 0.1));

/** How the commands that send bodies pace them, from their `--rate` and `--in-flight`. */
export const paceOf = (o: { readonly rate?: number; readonly inFlight?: number }) => ({
  ...(o.rate ? { rate: o.rate } : {}),
  ...(o.inFlight ? { inFlight: o.inFlight } : {}),
});

export const program = new Command('onceflow')
  .description('Operate an onceflow pipeline: on the local stack (default), LocalStack or AWS.')
  .addOption(
    new Option('--target <target>', 'where the stack runs')
      .choices(['local', 'localstack', 'aws'])
      .default('local'),
  )
  .option('--endpoint <url>', 'endpoint override (LocalStack default http://localhost:4566)')
  .option(
    '--stack-name <name>',
    'CloudFormation stack name (default onceflow-dev; local: the running one)',
  )
  .option('--region <region>', 'AWS region (default: the profile’s, then the environment)')
  .option('--profile <name>', 'a profile of the shared AWS config files (aws and localstack)')
  .option('--local-state <file>', 'the file `npm start -- --keep` wrote', DEFAULT_LOCAL_STATE)
  .option('--verbose', 'print stack traces on errors')
  .showHelpAfterError()
  .addHelpText(
    'after',
    '\nExamples:\n  npx onceflow generate --orders 1000 --hours 24 --seed 7 > orders.ndjson\n  npx onceflow send orders.ndjson && npx onceflow drain\n  npx onceflow --target aws --stack-name onceflow-prod status',
  );

interface GlobalOptions {
  target: TargetKind;
  endpoint?: string;
  stackName?: string;
  region?: string;
  profile?: string;
  localState: string;
  verbose?: boolean;
}
export const globals = () => program.opts<GlobalOptions>();

export const target = (): Promise<Target> => {
  const o = globals();
  return resolveTarget({
    target: o.target,
    localState: o.localState,
    ...(o.endpoint ? { endpoint: o.endpoint } : {}),
    ...(o.stackName ? { stackName: o.stackName } : {}),
    ...(o.region ? { region: o.region } : {}),
    ...(o.profile ? { profile: o.profile } : {}),
  });
};

/** A progress bar on stderr when it is a terminal; nothing otherwise (pipes stay clean). */
export const progress = (label: string) => {
  if (!process.stderr.isTTY) return { update: (_: number, __: number) => {}, stop: () => {} };
  const bar = new SingleBar({
    format: `${label} |{bar}| {value}/{total}`,
    stream: process.stderr,
    hideCursor: true,
  });
  let started = false;
  return {
    update: (value: number, total: number) => {
      if (!started) bar.start(total, value);
      started = true;
      bar.setTotal(total);
      bar.update(value);
    },
    stop: () => started && bar.stop(),
  };
};

/** An error's stack and every cause under it, for --verbose. */
export const causeChain = (error: unknown): string => {
  const lines: string[] = [];
  for (let e = error, depth = 0; e !== undefined && depth < 10; depth++) {
    const err = e instanceof Error ? e : new Error(String(e));
    lines.push(`${depth === 0 ? '' : 'caused by: '}${err.stack ?? `${err.name}: ${err.message}`}`);
    e = err.cause;
  }
  return lines.join('\n');
};

/**
 * Why the contract bans `id` as an id of its kind (it then keys nothing, and one over 2 KB is no
 * valid key at all), or undefined when it allows it. Checked before any request.
 */
export const bannedIdReason = (
  schema: v.GenericSchema<unknown, string>,
  kind: string,
  id: string,
): string | undefined => {
  const parsed = v.safeParse(schema, id);
  return parsed.success
    ? undefined
    : `${id === '' ? 'an empty id' : shortened(id, 128)} is no ${kind}: it ${parsed.issues[0].message}`;
};

/** Runs a command body; errors become one line on stderr and exit code 1 (--verbose: the chain). */
export const run =
  <A extends unknown[]>(body: (...args: A) => Promise<number | undefined>) =>
  async (...args: A) => {
    try {
      process.exitCode = (await body(...args)) ?? 0;
    } catch (error) {
      const line =
        error instanceof CliError
          ? error.message
          : error instanceof Error
            ? `${error.name}: ${error.message}`
            : String(error);
      // Messages carry text from outside (object keys, service answers): printed escaped.
      console.error(`onceflow: ${terminalSafe(line)}`);
      if (globals().verbose) console.error(causeChain(error));
      process.exitCode = 1;
    }
  };

/** `all`, or comma-separated active ISO 4217 codes. */
export const currencyList = (text: string): string[] => {
  if (text === 'all') return [...CURRENCIES];
  const codes = text.split(',').map((c) => c.trim().toUpperCase());
  const unknown = codes.filter((c) => currencyExponent(c) === undefined);
  if (unknown.length > 0 || codes.length === 0) {
    throw new InvalidArgumentError(
      `${unknown.join(', ') || text}: not active ISO 4217 codes (give e.g. USD,JPY,KWD or all)`,
    );
  }
  return codes;
};

export const json = (value: unknown) => console.log(JSON.stringify(value, null, 2));
