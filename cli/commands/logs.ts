/**
 * `onceflow logs <ingest|aggregate>`: a function's log, as `sam logs` shows it. Local: the files
 * the local runtime writes; LocalStack and AWS: the function's CloudWatch Logs group. Lines are
 * untrusted (they carry message content): printed escaped.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  CloudWatchLogsClient,
  type FilteredLogEvent,
  FilterLogEventsCommand,
} from '@aws-sdk/client-cloudwatch-logs';
import { GetFunctionConfigurationCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { Argument, type Command } from 'commander';
import { LogTail, lineTime } from '../../local/log-lines.ts';
import { terminalSafeLine } from '../../local/render.ts';
import { globals, run, target } from '../program.ts';
import { CliError, type Target } from '../target.ts';
import { parseInstant } from './interval.ts';

/** The functions operators name, by the stack output holding each one's name. */
export const FUNCTIONS = {
  ingest: 'IngestFunctionName',
  aggregate: 'AggregateFunctionName',
  finalize: 'FinalizeFunctionName',
  // The pending watcher: its schedule is what feeds the stuck-batch alarm.
  watch: 'WatchFunctionName',
} as const;
export type FunctionKey = keyof typeof FUNCTIONS;

/** The queue-fed functions, by the stack output holding the ARN of the queue that triggers each. */
export const QUEUES = { ingest: 'OrdersQueueArn', aggregate: 'AggregateQueueArn' } as const;
export type QueueFunction = keyof typeof QUEUES;
export const isQueueFunction = (fn: FunctionKey): fn is QueueFunction => fn in QUEUES;
/** Every function the CLI knows, and the queue-fed ones, in the order they are shown. */
export const FUNCTION_KEYS: readonly FunctionKey[] = ['ingest', 'aggregate', 'finalize', 'watch'];
export const QUEUE_FUNCTIONS: readonly QueueFunction[] = ['ingest', 'aggregate'];

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since`: a duration back from now (`30s`, `10m`, `2h`, `1d`) or an RFC 3339 time. */
export const sinceMs = (text: string, nowMs: number): number => {
  const relative = /^(\d+)([smhd])$/.exec(text.trim());
  if (relative) return nowMs - Number(relative[1]) * (UNITS[relative[2] ?? 's'] ?? 1000);
  return parseInstant('--since', text, 'a duration (30s, 10m, 2h, 1d)');
};

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface LogOptions {
  readonly since?: string;
  readonly follow?: boolean;
  readonly filter?: string;
}

/** Which lines to print: non-empty, with the text, and (with --since) from that time on. */
const selector = (from: number | undefined, filter: string | undefined) => {
  let last: number | undefined;
  return (line: string): boolean => {
    last = lineTime(line) ?? last;
    if (line.trim() === '' || (filter !== undefined && !line.includes(filter))) return false;
    return from === undefined || (last !== undefined && last >= from);
  };
};

/** The local runtime's log file of the function: printed, then followed by polling its size. */
const localLogs = async (file: string, o: LogOptions, print: (line: string) => void) => {
  if (!existsSync(file) && !o.follow)
    throw new CliError(`no log file ${file} (has the function run yet?)`);
  const keep = selector(o.since === undefined ? undefined : sinceMs(o.since, Date.now()), o.filter);
  const tail = new LogTail(file);
  const drain = () => {
    for (const line of tail.read()) if (keep(line)) print(line);
  };
  if (!o.follow) {
    for (const line of readFileSync(file, 'utf8').split('\n')) if (keep(line)) print(line);
    return;
  }
  for (;;) {
    drain();
    await delay(250);
  }
};

/** The function's CloudWatch Logs group (its own, from its logging configuration). */
const logGroupOf = async (t: Target, functionName: string): Promise<string> => {
  const lambda = new LambdaClient(t.clientConfig ?? { region: t.region });
  const config = await lambda.send(
    new GetFunctionConfigurationCommand({ FunctionName: functionName }),
  );
  return config.LoggingConfig?.LogGroup ?? `/aws/lambda/${functionName}`;
};

const cloudLogs = async (
  t: Target,
  functionName: string,
  o: LogOptions,
  print: (line: string) => void,
) => {
  const logs = new CloudWatchLogsClient(t.clientConfig ?? { region: t.region });
  const logGroupName = await logGroupOf(t, functionName);
  let startTime = o.since === undefined ? Date.now() - 10 * 60_000 : sinceMs(o.since, Date.now());
  const seen = new Set<string>();
  const keep = selector(undefined, o.filter);
  for (;;) {
    let nextToken: string | undefined;
    const events: FilteredLogEvent[] = [];
    do {
      const page = await logs.send(
        new FilterLogEventsCommand({
          logGroupName,
          startTime,
          ...(nextToken ? { nextToken } : {}),
        }),
      );
      events.push(...(page.events ?? []));
      nextToken = page.nextToken;
    } while (nextToken);
    for (const event of events) {
      if (event.eventId && seen.has(event.eventId)) continue;
      if (event.eventId) seen.add(event.eventId);
      for (const line of (event.message ?? '').split('\n')) if (keep(line)) print(line);
      startTime = Math.max(startTime, event.timestamp ?? startTime);
    }
    if (!o.follow) return;
    await delay(2000);
  }
};

export const register = (program: Command): void => {
  program
    .command('logs')
    .description('a function’s log: the local runtime’s files, or CloudWatch Logs on AWS')
    .addArgument(
      new Argument('<function>', 'ingest, aggregate, finalize or watch').choices(FUNCTION_KEYS),
    )
    .option('--since <when>', 'from this long ago (30s, 10m, 2h, 1d) or this RFC 3339 time')
    .option('--follow', 'keep printing new lines until Ctrl-C')
    .option('--filter <text>', 'only lines containing this text (e.g. a batch id, ERROR)')
    .addHelpText(
      'after',
      '\nExamples:\n  npx onceflow logs ingest --since 10m --filter ERROR\n  npx onceflow logs aggregate --follow',
    )
    .action(
      run(async (fn: FunctionKey, o: LogOptions) => {
        const t = await target();
        const name = t.output(FUNCTIONS[fn]);
        const print = (line: string) => console.log(terminalSafeLine(line));
        if (t.kind === 'local')
          await localLogs(join(dirname(globals().localState), 'logs', `${name}.log`), o, print);
        else await cloudLogs(t, name, o, print);
        return 0;
      }),
    );
};
