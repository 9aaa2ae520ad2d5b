/**
 * The calls `onceflow check --fix` makes, one per change, each waited for until AWS has applied
 * it: what it changes comes from `check-fixes.ts`, which only plans.
 */
import {
  CloudWatchClient,
  EnableAlarmActionsCommand,
  PutMetricAlarmCommand,
} from '@aws-sdk/client-cloudwatch';
import { EventBridgeClient, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import {
  CreateEventSourceMappingCommand,
  DeleteFunctionConcurrencyCommand,
  GetEventSourceMappingCommand,
  LambdaClient,
  PutFunctionConcurrencyCommand,
  UpdateEventSourceMappingCommand,
  UpdateFunctionConfigurationCommand,
  waitUntilFunctionUpdatedV2,
} from '@aws-sdk/client-lambda';
import {
  CreateQueueCommand,
  QueueDeletedRecently,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import { waitFor } from '../../local/net.ts';
import { CliError, type Target } from '../target.ts';
import type { Repair } from './check-fixes.ts';

/** Lambda applies a trigger's change in the background (`Creating`, `Updating`): waits for it. */
const settled = (lambda: LambdaClient, UUID: string | undefined) =>
  waitFor(
    async () =>
      !['Creating', 'Updating'].includes(
        (await lambda.send(new GetEventSourceMappingCommand({ UUID }))).State ?? '',
      ),
    { timeoutMs: 120_000, what: `trigger ${UUID} to settle` },
  );

/** The clients the changes are made with, made once per `--fix`. */
export interface Clients {
  readonly lambda: LambdaClient;
  readonly events: EventBridgeClient;
  readonly cloudWatch: CloudWatchClient;
}

/** Makes one change; a function's update is waited for, since Lambda refuses the next meanwhile. */
export const apply = async (
  t: Target,
  { lambda, events, cloudWatch }: Clients,
  { request: r }: Repair,
) => {
  switch (r.kind) {
    case 'alarm-actions':
      await cloudWatch.send(new EnableAlarmActionsCommand({ AlarmNames: [r.alarmName] }));
      return;
    case 'create-alarm':
      await cloudWatch.send(new PutMetricAlarmCommand(r.alarm));
      return;
    case 'create-rule': {
      const { Targets, ...rule } = r.rule;
      await events.send(new PutRuleCommand(rule));
      const put = await events.send(
        new PutTargetsCommand({ Rule: rule.Name, EventBusName: rule.EventBusName, Targets }),
      );
      if (put.FailedEntryCount)
        throw new CliError(
          `rule ${rule.Name} was created, but EventBridge refused its targets: ${(put.FailedEntries ?? []).map((e) => `${e.TargetId}: ${e.ErrorMessage}`).join('; ')}`,
        );
      return;
    }
    case 'create-queue':
      // SQS refuses a queue's name for 60 s after its deletion.
      await waitFor(
        async () => {
          try {
            await t.clients.sqs.send(
              new CreateQueueCommand({ QueueName: r.queueName, Attributes: { ...r.attributes } }),
            );
            return true;
          } catch (error) {
            if (error instanceof QueueDeletedRecently) return false;
            throw error;
          }
        },
        { timeoutMs: 90_000, intervalMs: 5_000, what: `SQS to take the name ${r.queueName} again` },
      );
      return;
    case 'queue-attributes':
      await t.clients.sqs.send(
        new SetQueueAttributesCommand({ QueueUrl: r.queueUrl, Attributes: { ...r.attributes } }),
      );
      return;
    case 'response-types':
      await lambda.send(
        new UpdateEventSourceMappingCommand({
          UUID: r.uuid,
          FunctionResponseTypes: [...r.functionResponseTypes],
        }),
      );
      return settled(lambda, r.uuid);
    case 'create-mapping': {
      const { UUID } = await lambda.send(
        new CreateEventSourceMappingCommand({
          FunctionName: r.functionName,
          EventSourceArn: r.eventSourceArn,
          ...r.properties,
        }),
      );
      return settled(lambda, UUID);
    }
    case 'reserved-concurrency':
      if (r.value === undefined)
        await lambda.send(new DeleteFunctionConcurrencyCommand({ FunctionName: r.functionName }));
      else
        await lambda.send(
          new PutFunctionConcurrencyCommand({
            FunctionName: r.functionName,
            ReservedConcurrentExecutions: r.value,
          }),
        );
      return;
    case 'timeout':
    case 'environment':
      await lambda.send(
        new UpdateFunctionConfigurationCommand({
          FunctionName: r.functionName,
          ...(r.kind === 'timeout'
            ? { Timeout: r.seconds }
            : { Environment: { Variables: { ...r.variables } } }),
        }),
      );
      await waitUntilFunctionUpdatedV2(
        { client: lambda, maxWaitTime: 120 },
        { FunctionName: r.functionName },
      );
  }
};

/** The clients the changes are made with, made once per `--fix`. */
export const repairClients = (t: Target): Clients => {
  const config = t.clientConfig ?? { region: t.region };
  return {
    lambda: new LambdaClient(config),
    events: new EventBridgeClient(config),
    cloudWatch: new CloudWatchClient(config),
  };
};
