/**
 * `onceflow invoke <ingest|aggregate> <file>`: one invocation of a function with the SQS event
 * its event source mapping would build from these bodies, as `sam local invoke` runs a function
 * on an event file, on any target (the local runtime's Lambda API, LocalStack or AWS). No queue
 * takes part: nothing is received or deleted, so a failed record is reported, not retried. The
 * functions are idempotent, so invoking them with a batch already applied changes nothing.
 * `onceflow invoke finalize` runs the finalizer now, with the event its schedule sends.
 */
import { randomUUID } from 'node:crypto';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { SQSEvent } from 'aws-lambda';
import { Argument, type Command, Option } from 'commander';
import * as v from 'valibot';
import {
  counted,
  describeFinalizerRun,
  terminalSafe,
  terminalSafeLine,
} from '../../local/render.ts';
import { failedIdsOf, toSqsEvent, toSqsRecord } from '../../local/sqs-event.ts';
import { scheduledEvent } from '../../local/triggers.ts';
import { FinalizerRunSchema } from '../../shared/finalizer.ts';
import { bodyLines, readInput } from '../input.ts';
import { integer, json, run, target } from '../program.ts';
import { CliError, type Target } from '../target.ts';
import {
  FUNCTION_KEYS,
  FUNCTIONS,
  type FunctionKey,
  isQueueFunction,
  QUEUES,
  type QueueFunction,
} from './logs.ts';

/** JSON text's value, or the text itself when it is not JSON. */
const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

export interface EventOptions {
  /** `ApproximateReceiveCount` of every record: above 1, a redelivery. Default 1. */
  readonly receiveCount?: number;
}

/** The SQS event the function's event source mapping would deliver for these bodies, in order. */
export const sqsEventFor = (
  t: Target,
  fn: QueueFunction,
  bodies: readonly string[],
  o: EventOptions = {},
): SQSEvent => {
  const now = String(Date.now());
  const queueArn = t.output(QUEUES[fn]);
  const fifo = queueArn.endsWith('.fifo');
  return toSqsEvent(
    bodies.map((body, i) => {
      const messageId = randomUUID();
      return toSqsRecord(
        {
          MessageId: messageId,
          ReceiptHandle: `onceflow-invoke-${randomUUID()}`,
          Body: body,
          Attributes: {
            ApproximateReceiveCount: String(o.receiveCount ?? 1),
            SentTimestamp: now,
            ApproximateFirstReceiveTimestamp: now,
            SenderId: 'onceflow-invoke',
            // The aggregate queue, when it coalesces, is FIFO: grouped by hour, as sent.
            ...(fifo
              ? {
                  MessageGroupId: groupOf(body),
                  MessageDeduplicationId: messageId,
                  SequenceNumber: String(i + 1).padStart(20, '0'),
                }
              : {}),
          },
        },
        queueArn,
        t.region,
      );
    }),
  );
};

/** An hour notification's FIFO group is its hour; any other body gets a group of its own. */
const groupOf = (body: string): string => {
  const notification = v.safeParse(v.object({ hour: v.string() }), parseJson(body));
  return notification.success ? notification.output.hour : 'onceflow-invoke';
};

/** What Lambda returns for an invocation that threw. */
const InvokeErrorSchema = v.object({
  errorType: v.optional(v.string()),
  errorMessage: v.optional(v.string()),
});

export interface Invocation {
  readonly functionName: string;
  /** Each record's message id, in the order of the bodies. */
  readonly messageIds: readonly string[];
  /** The 1-based positions of the bodies whose records failed (all of them when it threw). */
  readonly failed: readonly number[];
  /** Why the whole invocation failed: it threw, or returned what Lambda takes as failing all. */
  readonly error?: string;
  /** The end of the function's log meanwhile (Lambda's log tail: its last 4 KB). */
  readonly logTail?: string;
}

/** The positions of the records the response fails, read as the event source mapping reads it. */
const failuresOf = (
  payload: unknown,
  messageIds: readonly string[],
): { failed: number[]; error?: string } => {
  const { ids, invalid } = failedIdsOf(payload, messageIds);
  const failed = messageIds.flatMap((id, i) => (ids.includes(id) ? [i + 1] : []));
  return invalid ? { failed, error: `${invalid}, so every record fails` } : { failed };
};

/** One synchronous invocation: the response, why it failed if it threw, and the log tail. */
const invokeOnce = async (t: Target, fn: FunctionKey, event: unknown) => {
  const functionName = t.output(FUNCTIONS[fn]);
  const lambda = new LambdaClient(t.clientConfig ?? { region: t.region });
  const out = await lambda.send(
    new InvokeCommand({
      FunctionName: functionName,
      Payload: JSON.stringify(event),
      LogType: 'Tail',
    }),
  );
  const payload = parseJson(out.Payload ? new TextDecoder().decode(out.Payload) : 'null');
  const logTail = out.LogResult ? Buffer.from(out.LogResult, 'base64').toString('utf8') : '';
  let error: string | undefined;
  if (out.FunctionError) {
    const thrown = v.safeParse(InvokeErrorSchema, payload);
    const what = thrown.success
      ? [thrown.output.errorType, thrown.output.errorMessage].filter(Boolean).join(': ')
      : String(payload);
    error = `it failed (${out.FunctionError})${what ? `: ${what}` : ''}`;
  }
  return { functionName, payload, ...(logTail ? { logTail } : {}), ...(error ? { error } : {}) };
};

/** Invokes an SQS-triggered function once with the event, synchronously, with its log tail. */
export const invokeWithEvent = async (
  t: Target,
  fn: QueueFunction,
  event: SQSEvent,
): Promise<Invocation> => {
  const { payload, error, ...rest } = await invokeOnce(t, fn, event);
  const messageIds = event.Records.map((r) => r.messageId);
  if (error) return { ...rest, messageIds, failed: messageIds.map((_, i) => i + 1), error };
  return { ...rest, messageIds, ...failuresOf(payload, messageIds) };
};

/** Runs the finalizer now, with the event its schedule sends: what it finalized, or why not. */
export const invokeFinalizer = async (t: Target) => {
  const event = scheduledEvent({
    // The stack's account, as its ARNs name it.
    account: t.output('OrdersQueueArn').split(':')[4] ?? '',
    region: t.region,
  });
  const { payload, ...rest } = await invokeOnce(t, 'finalize', event);
  if (rest.error) return rest;
  const run = v.safeParse(FinalizerRunSchema, payload);
  return run.success
    ? { ...rest, run: run.output }
    : { ...rest, error: `it returned no finalizer run: ${JSON.stringify(payload).slice(0, 200)}` };
};

/** The invocation as the terminal shows it; `lineOf` gives each body's line in its file. */
export const describeInvocation = (r: Invocation, lineOf: readonly number[] = []): string[] => {
  const failedLines = r.failed.map((position) => lineOf[position - 1] ?? position);
  const lines = [
    `invoked ${terminalSafe(r.functionName)} with ${counted(r.messageIds.length, 'record')}`,
  ];
  if (r.error) {
    lines.push(
      `✘ ${terminalSafe(r.error)}. From its queue, every record would be delivered again.`,
    );
  } else if (r.failed.length > 0) {
    lines.push(
      `✘ ${r.failed.length} of ${counted(r.messageIds.length, 'record')} failed (${r.failed.length === 1 ? 'line' : 'lines'} ${failedLines.join(', ')}). From its queue, each would be delivered again, then moved to the DLQ past its maxReceiveCount.`,
    );
  } else {
    lines.push('✓ every record succeeded');
  }
  return lines;
};

/** Prints the log tail when asked, then the lines that say how it went. */
const report = (logTail: string | undefined, withLogs: boolean | undefined, lines: string[]) => {
  for (const line of withLogs ? (logTail ?? '').trimEnd().split('\n') : [])
    if (line) console.log(terminalSafeLine(line));
  for (const line of lines) console.log(line);
};

interface InvokeCliOptions {
  readonly receiveCount: number;
  readonly eventOnly?: boolean;
  readonly logs?: boolean;
  readonly json?: boolean;
}

const invokeQueueFunction = async (fn: QueueFunction, file: string, o: InvokeCliOptions) => {
  const { bodies, lineOf } = bodyLines(readInput(file));
  const t = await target();
  const event = sqsEventFor(t, fn, bodies, { receiveCount: o.receiveCount });
  if (o.eventOnly) {
    json(event);
    return 0;
  }
  const result = await invokeWithEvent(t, fn, event);
  if (o.json) json(result);
  else report(result.logTail, o.logs, describeInvocation(result, lineOf));
  return result.failed.length > 0 ? 1 : 0;
};

const runFinalizer = async (o: InvokeCliOptions) => {
  const result = await invokeFinalizer(await target());
  if (o.json) json(result);
  else
    report(result.logTail, o.logs, [
      `invoked ${terminalSafe(result.functionName)} with its schedule's event`,
      'run' in result ? describeFinalizerRun(result.run) : `✘ ${terminalSafe(result.error ?? '')}`,
    ]);
  return 'run' in result ? 0 : 1;
};

export const register = (program: Command): void => {
  program
    .command('invoke')
    .description(
      'invoke a function once: ingest or aggregate with the SQS event its queue’s mapping would deliver for these bodies, finalize with its schedule’s event',
    )
    .addArgument(
      // The pending watcher only reports metrics: `status` reads the same pending batches.
      new Argument('<function>', 'ingest, aggregate or finalize').choices(
        FUNCTION_KEYS.filter((fn) => fn !== 'watch'),
      ),
    )
    .argument(
      '[file]',
      'ingest and aggregate: NDJSON file, one message body per line (a record each); - for stdin',
    )
    .addOption(
      new Option('--receive-count <n>', 'ApproximateReceiveCount of every record (a redelivery)')
        .argParser(integer('a count', 1, 1000))
        .default(1),
    )
    .option('--event-only', 'print the SQS event and invoke nothing (an event file to keep)')
    .option('--logs', 'print the end of the function’s log meanwhile (Lambda’s 4 KB log tail)')
    .option(
      '--json',
      'print {functionName, messageIds, failed, error, logTail} as JSON ({functionName, run, error, logTail} for finalize)',
    )
    .addHelpText(
      'after',
      [
        '',
        'No queue takes part: nothing is received or deleted, and a failed record is reported,',
        'not retried. Exit 1 if any record failed, or the finalizer did.',
        '',
        'Examples:',
        '  head -1 test/fixtures/seed-orders/batches.ndjson | npx onceflow invoke ingest - --logs',
        '  echo \'{"hour":"2026-10-01T09:00:00Z"}\' | npx onceflow invoke aggregate -',
        '  npx onceflow invoke ingest batches.ndjson --event-only > sqs-event.json',
        '  npx onceflow invoke finalize     # finalize the hours that are due, now',
      ].join('\n'),
    )
    .action(
      run(async (fn: FunctionKey, file: string | undefined, o: InvokeCliOptions) => {
        if (!isQueueFunction(fn)) {
          if (file !== undefined || o.eventOnly)
            throw new CliError(`${fn} runs on its schedule's event: it takes no bodies`);
          return runFinalizer(o);
        }
        if (file === undefined)
          throw new CliError(`give ${fn} a file of message bodies, one per line (- for stdin)`);
        return invokeQueueFunction(fn, file, o);
      }),
    );
};
