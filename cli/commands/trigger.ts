/**
 * `onceflow pause <function>` and `onceflow resume <function>`: disable or enable what invokes
 * a function, on any target, and wait until AWS reports it so. For ingest and the aggregator
 * that is their SQS trigger (the event source mapping); for the finalizer and the pending
 * watcher, their EventBridge schedules.
 *
 * Pausing a trigger is how to stop a queue-fed function during an incident: its messages wait in
 * the queue, no receive spent, for as long as the queue keeps them, and invocations already
 * running finish. Reserving a concurrency of 0 instead does not stop Lambda's pollers: they keep
 * receiving, every batch is throttled, and after `maxReceiveCount` receives its messages go to
 * the DLQ unprocessed. Pausing the finalizer holds finalization (during a backfill of recent
 * hours, say): hours stay open until it resumes, and the first run then catches up.
 */
import {
  DescribeRuleCommand,
  DisableRuleCommand,
  EnableRuleCommand,
  EventBridgeClient,
  ListRuleNamesByTargetCommand,
} from '@aws-sdk/client-eventbridge';
import {
  type EventSourceMappingConfiguration,
  GetEventSourceMappingCommand,
  GetFunctionConfigurationCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
  ResourceInUseException,
  UpdateEventSourceMappingCommand,
  type UpdateEventSourceMappingCommandInput,
} from '@aws-sdk/client-lambda';
import { Argument, type Command } from 'commander';
import { WaitTimeoutError, waitFor } from '../../local/net.ts';
import { number, run, target } from '../program.ts';
import { CliError, type Target } from '../target.ts';
import {
  FUNCTION_KEYS,
  FUNCTIONS,
  type FunctionKey,
  isQueueFunction,
  QUEUES,
  type QueueFunction,
} from './logs.ts';

/** Each function's trigger can be paused: the queue-fed ones' mappings, the scheduled ones' rules. */
const PAUSABLE = FUNCTION_KEYS;

/** What stops while a function's trigger is paused or missing. */
export const HELD: Record<FunctionKey, string> = {
  ingest: 'its messages wait in the queue',
  aggregate: 'its messages wait in the queue',
  finalize: 'no hour is finalized',
  // Every alarm treats missing data as fine: with no run, no metric, and no stuck-batch alarm.
  watch: 'no stuck batch is noticed (the OldestPendingBatchAge alarm reads no data as fine)',
};

/**
 * What AWS says of each function's trigger: `Enabled`, `Disabled`, or a state in between
 * (`Disabling`…). Several triggers in different states read `Enabled/Disabling`.
 */
export type TriggerStates = Record<FunctionKey, string>;

/** How long a change may take, and who hears that it has to wait. */
export interface Patience {
  readonly untilMs: number;
  /** Told once per trigger that refused the change for now, with AWS's reason. */
  readonly onBusy: (reason: string) => void;
}

/** What AWS says of one mapping or rule: its state, and for a mapping when it last changed. */
interface Reading {
  readonly state: string;
  readonly lastModified?: Date;
}

/** What invokes a function: its mappings or rules, by id, and how to read and set them. */
interface Trigger {
  readonly what: 'trigger' | 'schedule';
  readonly ids: readonly string[];
  readings(): Promise<Reading[]>;
  set(enabled: boolean, patience: Patience): Promise<void>;
}

/** The clients the triggers are read and set with, made once per command. */
interface Clients {
  readonly lambda: LambdaClient;
  readonly events: EventBridgeClient;
}
const clientsOf = (t: Target): Clients => ({
  lambda: new LambdaClient(t.clientConfig ?? { region: t.region }),
  events: new EventBridgeClient(t.clientConfig ?? { region: t.region }),
});

/** A queue-fed function's event source mappings from its own queue (none when there are none). */
export const queueMappings = async (
  t: Target,
  lambda: LambdaClient,
  fn: QueueFunction,
): Promise<EventSourceMappingConfiguration[]> => {
  const queueArn = t.output(QUEUES[fn]);
  const mappings: EventSourceMappingConfiguration[] = [];
  let Marker: string | undefined;
  do {
    const page = await lambda.send(
      new ListEventSourceMappingsCommand({ FunctionName: t.output(FUNCTIONS[fn]), Marker }),
    );
    for (const m of page.EventSourceMappings ?? [])
      if (m.EventSourceArn === queueArn && m.UUID) mappings.push(m);
    Marker = page.NextMarker;
  } while (Marker);
  return mappings;
};

/** The UUIDs of a queue-fed function's event source mappings from its own queue. */
export const mappingUuids = async (
  t: Target,
  lambda: LambdaClient,
  fn: QueueFunction,
): Promise<string[]> => {
  const uuids = (await queueMappings(t, lambda, fn)).flatMap((m) => (m.UUID ? [m.UUID] : []));
  if (uuids.length === 0)
    throw new CliError(
      `${fn} has no trigger from its queue in ${t.stackName} (\`onceflow check --fix\` creates it as deployed)`,
    );
  return uuids;
};

/**
 * Updates a mapping, and again while it is in transition (Disabling while its running batches
 * finish, Updating after a deploy or another change), which AWS refuses with
 * ResourceInUseException, until it takes the change or `untilMs` has passed.
 */
export const updateMapping = async (
  lambda: LambdaClient,
  input: UpdateEventSourceMappingCommandInput,
  { untilMs, onBusy }: Patience,
): Promise<void> => {
  let told = false;
  await waitFor(
    async () => {
      try {
        await lambda.send(new UpdateEventSourceMappingCommand(input));
        return true;
      } catch (error) {
        if (!(error instanceof ResourceInUseException)) throw error;
        if (!told) onBusy(error.message);
        told = true;
        return false;
      }
    },
    { timeoutMs: Math.max(0, untilMs - Date.now()), what: `${input.UUID} to take the change` },
  );
};

/** A queue-fed function's event source mappings from its own queue. */
const mappingTrigger = async (
  t: Target,
  { lambda }: Clients,
  fn: QueueFunction,
): Promise<Trigger> => {
  // None (deleted by hand) is a state to report; `pause` and `resume` refuse it.
  const uuids = (await queueMappings(t, lambda, fn)).flatMap((m) => (m.UUID ? [m.UUID] : []));
  return {
    what: 'trigger',
    ids: uuids,
    readings: () =>
      Promise.all(
        uuids.map(async (UUID) => {
          const m = await lambda.send(new GetEventSourceMappingCommand({ UUID }));
          return { state: m.State ?? 'unknown', lastModified: m.LastModified };
        }),
      ),
    set: async (Enabled, patience) => {
      for (const UUID of uuids) await updateMapping(lambda, { UUID, Enabled }, patience);
    },
  };
};

/** A scheduled function's EventBridge rules (its schedule), found by the function they target. */
const ruleTrigger = async (
  t: Target,
  { lambda, events }: Clients,
  fn: FunctionKey,
): Promise<Trigger> => {
  const { FunctionArn } = await lambda.send(
    new GetFunctionConfigurationCommand({ FunctionName: t.output(FUNCTIONS[fn]) }),
  );
  const { RuleNames = [] } = await events.send(
    new ListRuleNamesByTargetCommand({ TargetArn: FunctionArn }),
  );
  // EventBridge's ENABLED and DISABLED, in Lambda's words, so that every trigger reads alike.
  const words: Record<string, string> = { ENABLED: 'Enabled', DISABLED: 'Disabled' };
  return {
    what: 'schedule',
    ids: RuleNames,
    // EventBridge keeps no time of a rule's last change.
    readings: () =>
      Promise.all(
        RuleNames.map(async (Name) => {
          const { State = 'unknown' } = await events.send(new DescribeRuleCommand({ Name }));
          return { state: words[State] ?? State };
        }),
      ),
    set: async (enabled) => {
      for (const Name of RuleNames)
        await events.send(
          enabled ? new EnableRuleCommand({ Name }) : new DisableRuleCommand({ Name }),
        );
    },
  };
};

const triggerOf = (t: Target, clients: Clients, fn: FunctionKey) =>
  isQueueFunction(fn) ? mappingTrigger(t, clients, fn) : ruleTrigger(t, clients, fn);

/**
 * Each function's trigger as AWS reports it: its state and, for a queue trigger, when it last
 * changed (the latest of its mappings' LastModified: for a paused one, since when).
 */
export interface TriggerReport {
  readonly states: TriggerStates;
  readonly changedAt: Partial<Record<FunctionKey, string>>;
}

export const triggerReport = async (t: Target): Promise<TriggerReport> => {
  const clients = clientsOf(t);
  const reports = await Promise.all(
    PAUSABLE.map(async (fn) => {
      const readings = await (await triggerOf(t, clients, fn)).readings();
      const times = readings.flatMap((r) => (r.lastModified ? [r.lastModified.getTime()] : []));
      return {
        fn,
        // No mapping or rule at all: deleted by hand.
        state: [...new Set(readings.map((r) => r.state))].join('/') || 'none',
        changedAt: times.length > 0 ? new Date(Math.max(...times)).toISOString() : undefined,
      };
    }),
  );
  const states: TriggerStates = {
    ingest: 'unknown',
    aggregate: 'unknown',
    finalize: 'unknown',
    watch: 'unknown',
  };
  const changedAt: TriggerReport['changedAt'] = {};
  for (const r of reports) {
    states[r.fn] = r.state;
    if (r.changedAt !== undefined) changedAt[r.fn] = r.changedAt;
  }
  return { states, changedAt };
};

/**
 * Enables or disables the function's trigger and waits until all of it says so, telling on
 * stderr what it waits for. Disabling ends once the batches already running have finished.
 */
const setTrigger = async (t: Target, fn: FunctionKey, enabled: boolean, timeoutS: number) => {
  const untilMs = Date.now() + timeoutS * 1000;
  const wanted = enabled ? 'Enabled' : 'Disabled';
  const trigger = await triggerOf(t, clientsOf(t), fn);
  if (trigger.ids.length === 0)
    throw new CliError(
      `${fn} has no ${trigger.what} in ${t.stackName}${trigger.what === 'trigger' ? ' from its queue' : ''} (\`onceflow check --fix\` creates it as deployed)`,
    );
  const told = new Set<string>();
  const tell = (line: string) => {
    if (!told.has(line)) console.error(line);
    told.add(line);
  };
  let states: string[] = [];
  const statesNow = async () => (await trigger.readings()).map((r) => r.state);
  try {
    await trigger.set(enabled, {
      untilMs,
      onBusy: (reason) => tell(`${fn}'s ${trigger.what} is busy, waiting: ${reason}`),
    });
    await waitFor(
      async () => {
        states = await statesNow();
        if (states.includes('Disabling'))
          tell(`${fn}'s ${trigger.what} is Disabling: batches it is running finish first`);
        return states.every((s) => s === wanted);
      },
      { timeoutMs: Math.max(0, untilMs - Date.now()), what: `${fn}'s ${trigger.what}` },
    );
  } catch (error) {
    if (error instanceof WaitTimeoutError) {
      states = await statesNow().catch(() => states);
      throw new CliError(
        `${fn}'s ${trigger.what} was not ${wanted.toLowerCase()} within ${timeoutS} s${states.length > 0 ? ` (it is ${[...new Set(states)].join('/')})` : ''}: AWS applies a change in the background, check with \`onceflow status\``,
        { cause: error },
      );
    }
    throw error;
  }
  return trigger;
};

export const register = (program: Command): void => {
  const fnArgument = () =>
    new Argument('<function>', "the function whose trigger (a scheduled one's: schedule)").choices(
      PAUSABLE,
    );
  program
    .command('pause')
    .description(
      "stop what invokes a function: ingest's or the aggregator's SQS trigger (its messages wait in the queue, no receive spent), or the finalizer's or the pending watcher's schedule; invocations already running finish",
    )
    .addArgument(fnArgument())
    .option('--timeout <seconds>', 'how long to wait for AWS', number('seconds', 1), 120)
    .addHelpText(
      'after',
      '\nRather than reserving a concurrency of 0, which throttles every batch until its\nmessages reach the DLQ.\n\nExample:\n  npx onceflow pause ingest && npx onceflow status',
    )
    .action(
      run(async (fn: FunctionKey, o: { timeout: number }) => {
        const t = await target();
        const trigger = await setTrigger(t, fn, false, o.timeout);
        console.log(
          `${fn}'s ${trigger.what} is paused (${trigger.ids.join(', ')}): ${HELD[fn]} until \`onceflow resume ${fn}\``,
        );
        return 0;
      }),
    );
  program
    .command('resume')
    .description('start what invokes a function again after `pause`')
    .addArgument(fnArgument())
    .option('--timeout <seconds>', 'how long to wait for AWS', number('seconds', 1), 120)
    .addHelpText('after', '\nExample:\n  npx onceflow resume ingest && npx onceflow drain')
    .action(
      run(async (fn: FunctionKey, o: { timeout: number }) => {
        const t = await target();
        const trigger = await setTrigger(t, fn, true, o.timeout);
        console.log(`${fn}'s ${trigger.what} is enabled again (${trigger.ids.join(', ')})`);
        return 0;
      }),
    );
};
