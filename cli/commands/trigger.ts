/**
 * `onceflow pause <ingest|aggregate>` and `onceflow resume <ingest|aggregate>`: disable or enable
 * the function's SQS trigger (its event source mapping) on any target, and wait until Lambda
 * reports it so. Pausing is how to stop a queue-fed function during an incident: its messages
 * wait in the queue, no receive spent, for as long as the queue keeps them, and invocations
 * already running finish. Reserving a concurrency of 0 instead does not stop Lambda's pollers:
 * they keep receiving, every batch is throttled, and after `maxReceiveCount` receives its
 * messages go to the DLQ unprocessed.
 */
import {
  type EventSourceMappingConfiguration,
  GetEventSourceMappingCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
  UpdateEventSourceMappingCommand,
} from '@aws-sdk/client-lambda';
import { Argument, type Command } from 'commander';
import { WaitTimeoutError, waitFor } from '../../local/net.ts';
import { number, run, target } from '../program.ts';
import { CliError, type Target } from '../target.ts';
import { FUNCTIONS, QUEUE_FUNCTIONS, QUEUES, type QueueFunction } from './logs.ts';

/** What Lambda says of a trigger: `Enabled`, `Disabled`, or a state in between (`Disabling`…). */
export type TriggerStates = Record<QueueFunction, string>;

const lambdaOf = (t: Target) => new LambdaClient(t.clientConfig ?? { region: t.region });

/** The function's mappings from its own queue. */
const mappingsOf = async (
  lambda: LambdaClient,
  t: Target,
  fn: QueueFunction,
): Promise<EventSourceMappingConfiguration[]> => {
  const queueArn = t.output(QUEUES[fn]);
  const found: EventSourceMappingConfiguration[] = [];
  let Marker: string | undefined;
  do {
    const page = await lambda.send(
      new ListEventSourceMappingsCommand({ FunctionName: t.output(FUNCTIONS[fn]), Marker }),
    );
    found.push(...(page.EventSourceMappings ?? []).filter((m) => m.EventSourceArn === queueArn));
    Marker = page.NextMarker;
  } while (Marker);
  if (found.length === 0)
    throw new CliError(`${fn} has no trigger from its queue in ${t.stackName}`);
  return found;
};

/** Each queue-fed function's trigger state, as Lambda reports it. */
export const triggerStates = async (t: Target): Promise<TriggerStates> => {
  const lambda = lambdaOf(t);
  const stateOf = async (fn: QueueFunction) => {
    const mappings = await mappingsOf(lambda, t, fn);
    return [...new Set(mappings.map((m) => m.State ?? 'unknown'))].join('/');
  };
  const [ingest, aggregate] = await Promise.all([stateOf('ingest'), stateOf('aggregate')]);
  return { ingest, aggregate };
};

/** Enables or disables the function's trigger and waits until every mapping of it says so. */
const setTrigger = async (t: Target, fn: QueueFunction, enabled: boolean, timeoutS: number) => {
  const lambda = lambdaOf(t);
  const wanted = enabled ? 'Enabled' : 'Disabled';
  const mappings = await mappingsOf(lambda, t, fn);
  for (const m of mappings)
    await lambda.send(new UpdateEventSourceMappingCommand({ UUID: m.UUID, Enabled: enabled }));
  try {
    await waitFor(
      async () => {
        for (const m of mappings) {
          const now = await lambda.send(new GetEventSourceMappingCommand({ UUID: m.UUID }));
          if (now.State !== wanted) return false;
        }
        return true;
      },
      { timeoutMs: timeoutS * 1000, what: `${fn}'s trigger to be ${wanted.toLowerCase()}` },
    );
  } catch (error) {
    if (error instanceof WaitTimeoutError)
      throw new CliError(
        `${fn}'s trigger was not ${wanted.toLowerCase()} within ${timeoutS} s (Lambda applies the change in the background: check with \`onceflow status\`)`,
        { cause: error },
      );
    throw error;
  }
  return mappings.map((m) => m.UUID ?? '');
};

export const register = (program: Command): void => {
  const fnArgument = () =>
    new Argument('<function>', 'the queue-fed function').choices(QUEUE_FUNCTIONS);
  program
    .command('pause')
    .description(
      "stop a function's SQS trigger: its messages wait in the queue, no receive spent, and invocations already running finish",
    )
    .addArgument(fnArgument())
    .option('--timeout <seconds>', 'how long to wait for Lambda', number('seconds', 1), 120)
    .addHelpText(
      'after',
      '\nRather than reserving a concurrency of 0, which throttles every batch until its\nmessages reach the DLQ.\n\nExample:\n  npx onceflow pause ingest && npx onceflow status',
    )
    .action(
      run(async (fn: QueueFunction, o: { timeout: number }) => {
        const t = await target();
        const uuids = await setTrigger(t, fn, false, o.timeout);
        console.log(
          `${fn}'s trigger is paused (${uuids.join(', ')}): its messages wait in the queue until \`onceflow resume ${fn}\``,
        );
        return 0;
      }),
    );
  program
    .command('resume')
    .description("start a function's SQS trigger again after `pause`")
    .addArgument(fnArgument())
    .option('--timeout <seconds>', 'how long to wait for Lambda', number('seconds', 1), 120)
    .addHelpText('after', '\nExample:\n  npx onceflow resume ingest && npx onceflow drain')
    .action(
      run(async (fn: QueueFunction, o: { timeout: number }) => {
        const t = await target();
        const uuids = await setTrigger(t, fn, true, o.timeout);
        console.log(`${fn}'s trigger is enabled again (${uuids.join(', ')})`);
        return 0;
      }),
    );
};
