/**
 * CloudWatch Logs' `FilterLogEvents` and `DescribeLogGroups` on the local edge, read from the
 * log files the local runtime writes: `onceflow logs --target localstack`, `aws logs
 * filter-log-events` and any SDK client see the functions' logs as on AWS. Each function's group
 * is `/aws/lambda/<name>` (Lambda's default, and what `GetFunctionConfiguration` reports).
 * Filter patterns: terms (all must appear), `"quoted phrases"`, `?either ?or`, `-excluded`;
 * JSON and space-delimited patterns are refused by name rather than matched wrongly.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import { answerJson11, failJson11, readJsonBody } from './http.ts';
import type { LambdaBackend } from './lambda-api.ts';
import { lineTime } from './log-lines.ts';

export const LOGS_TARGET_PREFIX = 'Logs_20140328.';
export const logGroupOf = (functionName: string) => `/aws/lambda/${functionName}`;

const FilterSchema = v.object({
  logGroupName: v.optional(v.string()),
  logGroupIdentifier: v.optional(v.string()),
  startTime: v.optional(v.number()),
  endTime: v.optional(v.number()),
  filterPattern: v.optional(v.string()),
  nextToken: v.optional(v.string()),
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10_000))),
});

const DescribeSchema = v.object({
  logGroupNamePrefix: v.optional(v.string()),
});

const answer = answerJson11;
const fail = failJson11;

interface Pattern {
  readonly all: string[];
  readonly any: string[];
  readonly none: string[];
}

/** A term pattern, or undefined for the pattern kinds the edge does not match. */
const parsePattern = (pattern: string): Pattern | undefined => {
  const text = pattern.trim();
  if (text.startsWith('{') || text.startsWith('[')) return undefined;
  const result: Pattern = { all: [], any: [], none: [] };
  for (const match of text.matchAll(/([?-]?)(?:"((?:[^"\\]|\\.)*)"|(\S+))/g)) {
    const term = match[2] === undefined ? (match[3] ?? '') : match[2].replace(/\\(.)/g, '$1');
    if (match[1] === '?') result.any.push(term);
    else if (match[1] === '-') result.none.push(term);
    else result.all.push(term);
  }
  return result;
};

const matches = (p: Pattern, line: string) =>
  p.all.every((t) => line.includes(t)) &&
  (p.any.length === 0 || p.any.some((t) => line.includes(t))) &&
  !p.none.some((t) => line.includes(t));

interface LogEvent {
  readonly logStreamName: string;
  readonly timestamp: number;
  readonly ingestionTime: number;
  readonly message: string;
  readonly eventId: string;
}

/**
 * The file's complete lines as events: each at its own time, or the time of the line before it.
 * The text after the last newline is a line still being written; served now, it would keep its
 * event id once complete, and `--follow` would never print the whole line.
 */
export const eventsOf = (file: string, stream: string): LogEvent[] => {
  if (!existsSync(file)) return [];
  let time = statSync(file).birthtimeMs || statSync(file).ctimeMs;
  let offset = 0;
  const events: LogEvent[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n').slice(0, -1)) {
    const at = offset;
    offset += Buffer.byteLength(line) + 1;
    if (line.trim() === '') continue;
    time = lineTime(line) ?? time;
    events.push({
      logStreamName: stream,
      timestamp: Math.floor(time),
      ingestionTime: Math.floor(time),
      message: line,
      // Stable across calls (the byte offset in the file), as `--follow` deduplicates by it.
      eventId: String(at).padStart(20, '0'),
    });
  }
  return events;
};

export const answerLogs = async (
  req: IncomingMessage,
  res: ServerResponse,
  action: string,
  backends: readonly LambdaBackend[],
): Promise<void> => {
  const parsed = await readJsonBody(req);
  if (!parsed) return fail(res, 400, 'SerializationException', 'the request body is not JSON');
  const body = parsed.value;
  const functions = backends.flatMap((b) =>
    b.functions.map((fn) => ({ fn, file: b.logFile?.(fn.name) })),
  );
  if (action === 'DescribeLogGroups') {
    const input = v.safeParse(DescribeSchema, body);
    const prefix = input.success ? (input.output.logGroupNamePrefix ?? '') : '';
    return answer(res, 200, {
      logGroups: functions
        .map(({ fn }) => logGroupOf(fn.name))
        .filter((name) => name.startsWith(prefix))
        .map((logGroupName) => ({ logGroupName, storedBytes: 0 })),
    });
  }
  if (action !== 'FilterLogEvents')
    return fail(
      res,
      400,
      'UnknownOperationException',
      `the onceflow local edge answers FilterLogEvents and DescribeLogGroups of CloudWatch Logs, not ${action}`,
    );
  const input = v.safeParse(FilterSchema, body);
  if (!input.success)
    return fail(
      res,
      400,
      'InvalidParameterException',
      input.issues.map((i) => i.message).join('; '),
    );
  const o = input.output;
  const group = o.logGroupName ?? o.logGroupIdentifier ?? '';
  const found = functions.find(({ fn }) => logGroupOf(fn.name) === group);
  if (!found)
    return fail(
      res,
      400,
      'ResourceNotFoundException',
      `The specified log group does not exist: ${group}`,
    );
  const pattern = parsePattern(o.filterPattern ?? '');
  if (!pattern)
    return fail(
      res,
      400,
      'InvalidParameterException',
      `filter pattern ${o.filterPattern}: the local edge matches terms, "phrases", ?alternatives and -exclusions only`,
    );
  const start = Number(o.nextToken ? Buffer.from(o.nextToken, 'base64url').toString() : 0);
  const selected = (found.file ? eventsOf(found.file, `$LATEST/${found.fn.name}`) : []).filter(
    (e) =>
      (o.startTime === undefined || e.timestamp >= o.startTime) &&
      (o.endTime === undefined || e.timestamp <= o.endTime) &&
      matches(pattern, e.message),
  );
  const limit = o.limit ?? 10_000;
  const page = selected.slice(start, start + limit);
  return answer(res, 200, {
    events: page,
    searchedLogStreams: [{ logStreamName: `$LATEST/${found.fn.name}`, searchedCompletely: true }],
    ...(start + limit < selected.length
      ? { nextToken: Buffer.from(String(start + limit)).toString('base64url') }
      : {}),
  });
};
