/**
 * A running stack taking its functions' new code from a new synthesis (`LocalRuntime.update`,
 * what `npm start -- --watch` calls), as Lambda's `UpdateFunctionCode` does: invocations under
 * way finish on their code, later ones start fresh environments with the new code, and what
 * cannot change without a restart is reported, not applied. The assemblies are written by hand:
 * a queue, a table, a function whose code says which version it is.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, GetTemplateCommand } from '@aws-sdk/client-cloudformation';
import {
  CloudWatchClient,
  DescribeAlarmsCommand,
  DisableAlarmActionsCommand,
} from '@aws-sdk/client-cloudwatch';
import {
  GetFunctionConfigurationCommand,
  LambdaClient,
  UpdateFunctionConfigurationCommand,
} from '@aws-sdk/client-lambda';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import { afterAll, describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS } from '../../local/emulators.ts';
import { waitFor } from '../../local/net.ts';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { lambdaAlarmResource, writeHandAssembly } from '../support/assembly.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { useEmulators } from '../support/emulators.ts';
import { uniqueName } from '../support/names.ts';

const emulators = useEmulators();
const work = mkdtempSync(join(tmpdir(), 'onceflow-hot-swap-'));

/**
 * A handler answering its version and the variable `GREETING`; with `holdUntil` in the event it
 * first writes `<holdUntil>.started`, then waits until the file `holdUntil` exists; with `fail`,
 * it fails.
 */
const handlerSource = (version: number) => `
import { existsSync, writeFileSync } from 'node:fs';
export const handler = async (event) => {
  if (event.fail) throw new Error('asked to fail');
  if (event.holdUntil) {
    writeFileSync(event.holdUntil + '.started', '');
    while (!existsSync(event.holdUntil)) await new Promise((r) => setTimeout(r, 10));
  }
  return { version: ${version}, greeting: process.env.GREETING };
};
`;

interface AssemblyOptions {
  readonly version: number;
  readonly greeting?: string;
  readonly visibilityTimeout?: number;
  /** Leave the bundle out (a synthesis the runtime cannot take). */
  readonly withoutBundle?: boolean;
  /** A trigger from the queue to the function, with these properties. */
  readonly mapping?: Record<string, unknown>;
  /** Two alarms on the function: `Errors` at this threshold, and `Throttles`. */
  readonly errorsThreshold?: number;
}

/** A cloud assembly of one stack, as `cdk synth` lays it out, in a directory of its own. */
const writeAssembly = (stackName: string, o: AssemblyOptions): string => {
  const asset = `asset.v${o.version}`;
  return writeHandAssembly(
    work,
    stackName,
    {
      Resources: {
        Work: {
          Type: 'AWS::SQS::Queue',
          Properties: { VisibilityTimeout: o.visibilityTimeout ?? 30 },
        },
        Things: {
          Type: 'AWS::DynamoDB::Table',
          Properties: {
            AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
            KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
            BillingMode: 'PAY_PER_REQUEST',
          },
        },
        Fn: {
          Type: 'AWS::Lambda::Function',
          Metadata: { 'aws:asset:path': asset },
          Properties: {
            Handler: 'index.handler',
            Timeout: 30,
            MemorySize: 128,
            Environment: {
              Variables: { GREETING: o.greeting ?? 'hello', TABLE: { Ref: 'Things' } },
            },
          },
        },
        ...(o.mapping
          ? {
              Trigger: {
                Type: 'AWS::Lambda::EventSourceMapping',
                Properties: {
                  EventSourceArn: { 'Fn::GetAtt': ['Work', 'Arn'] },
                  FunctionName: { Ref: 'Fn' },
                  ...o.mapping,
                },
              },
            }
          : {}),
        ...(o.errorsThreshold === undefined
          ? {}
          : {
              Errors: lambdaAlarmResource('Errors', o.errorsThreshold),
              Throttles: lambdaAlarmResource('Throttles', 1),
            }),
      },
      Outputs: { QueueUrl: { Value: { Ref: 'Work' } } },
    },
    o.withoutBundle ? {} : { [asset]: handlerSource(o.version) },
  );
};

const runtimes: LocalRuntime[] = [];
afterAll(async () => {
  await Promise.all(runtimes.map((r) => r.stop()));
});

const start = async (o: AssemblyOptions) => {
  const stackName = uniqueName('hot');
  const runtime = await startLocalRuntime({
    assemblyDir: writeAssembly(stackName, o),
    emulators: emulators(),
  });
  runtimes.push(runtime);
  return { runtime, stackName };
};

const AnswerSchema = v.object({ version: v.number(), greeting: v.string() });
const invoke = async (runtime: LocalRuntime, event: unknown = {}) =>
  v.parse(AnswerSchema, await runtime.invoke('Fn', event));

const configuration = (runtime: LocalRuntime) =>
  new LambdaClient({
    endpoint: runtime.endpoint,
    region: runtime.region,
    credentials: LOCAL_CREDENTIALS,
  }).send(new GetFunctionConfigurationCommand({ FunctionName: runtime.stack.functions[0]?.name }));

describe('a running stack updated from a new synthesis', () => {
  it('runs the new code and environment from the next invocation, and shuts the idle environment down', async () => {
    const { runtime, stackName } = await start({ version: 1 });
    expect(await invoke(runtime)).toEqual({ version: 1, greeting: 'hello' });
    const before = await configuration(runtime);
    expect(runtime.environments).toHaveLength(1);

    const update = await runtime.update(
      writeAssembly(stackName, { version: 2, greeting: 'bonjour' }),
    );
    expect(update.updated.map((fn) => fn.logicalId)).toEqual(['Fn']);
    expect(update.restartNeeded).toEqual([]);
    expect(runtime.environments).toHaveLength(0);
    expect(await invoke(runtime)).toEqual({ version: 2, greeting: 'bonjour' });

    // What Lambda's API reports changes with the code, as after UpdateFunctionCode.
    const after = await configuration(runtime);
    expect(after.CodeSha256).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(after.CodeSha256).not.toBe(before.CodeSha256);
    expect(after.Environment?.Variables?.GREETING).toBe('bonjour');
    // And CloudFormation's GetTemplate answers the template now deployed, as after `cdk deploy`.
    const { TemplateBody = '' } = await new CloudFormationClient({
      endpoint: runtime.endpoint,
      region: runtime.region,
      credentials: LOCAL_CREDENTIALS,
    }).send(new GetTemplateCommand({ StackName: runtime.stack.stackName }));
    expect(TemplateBody).toContain('bonjour');
    expect(TemplateBody).not.toContain('hello');
  });

  it('keeps a hand edit of a function across a redeploy that leaves the function alone, and replaces it when the function changes, as CloudFormation does', async () => {
    const { runtime, stackName } = await start({ version: 1 });
    const { Environment } = await configuration(runtime);
    await new LambdaClient({
      endpoint: runtime.endpoint,
      region: runtime.region,
      credentials: LOCAL_CREDENTIALS,
    }).send(
      new UpdateFunctionConfigurationCommand({
        FunctionName: runtime.stack.functions[0]?.name,
        Environment: { Variables: { ...Environment?.Variables, GREETING: 'hola' } },
      }),
    );
    expect(await invoke(runtime)).toEqual({ version: 1, greeting: 'hola' });

    const same = await runtime.update(writeAssembly(stackName, { version: 1 }));
    expect(same.updated).toEqual([]);
    expect(await invoke(runtime)).toEqual({ version: 1, greeting: 'hola' });

    const changed = await runtime.update(writeAssembly(stackName, { version: 2 }));
    expect(changed.updated.map((fn) => fn.logicalId)).toEqual(['Fn']);
    expect(await invoke(runtime)).toEqual({ version: 2, greeting: 'hello' });
  });

  it('lets an invocation under way finish on its code while the next one runs the new code', async () => {
    const { runtime, stackName } = await start({ version: 1 });
    const release = join(work, uniqueName('release'));
    const held = invoke(runtime, { holdUntil: release });
    await waitFor(() => existsSync(`${release}.started`), {
      timeoutMs: DEADLINE_MS,
      what: 'the first invocation to start',
    });
    await runtime.update(writeAssembly(stackName, { version: 2 }));
    // The first environment is busy: the update does not touch it.
    expect(runtime.environments).toHaveLength(1);
    expect((await invoke(runtime)).version).toBe(2);
    writeFileSync(release, '');
    expect((await held).version).toBe(1);
    // Its invocation over, the environment of the old code is gone; the new one stays warm.
    expect(runtime.environments.map((e) => e.fn.codeSha256)).toEqual([
      runtime.stack.functions[0]?.codeSha256,
    ]);
    expect((await invoke(runtime)).version).toBe(2);
    expect(runtime.environments).toHaveLength(1);
  });

  it('changes nothing when the same code comes again from another synthesis', async () => {
    const { runtime, stackName } = await start({ version: 1 });
    await invoke(runtime);
    const [environment] = runtime.environments;
    const update = await runtime.update(writeAssembly(stackName, { version: 1 }));
    expect(update).toEqual({ updated: [], restartNeeded: [], mappings: [] });
    expect(runtime.environments).toEqual([environment]);
    expect(environment?.coldStarts).toBe(1);
    await invoke(runtime);
    expect(environment?.coldStarts).toBe(1);
  });

  it('reports a change to a queue as needing a restart, and leaves the queue as it is', async () => {
    const { runtime, stackName } = await start({ version: 1 });
    const update = await runtime.update(
      writeAssembly(stackName, { version: 2, visibilityTimeout: 90 }),
    );
    expect(update.restartNeeded).toEqual(['Work (AWS::SQS::Queue) changed']);
    expect(update.updated).toHaveLength(1);
    const queueUrl = runtime.stack.outputs.QueueUrl;
    const { Attributes } = await runtime.clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['VisibilityTimeout'] }),
    );
    expect(Attributes?.VisibilityTimeout).toBe('30');
  });

  it('updates a trigger’s batch size and scaling in place, as CloudFormation does, and keeps it when Lambda would refuse the new ones', async () => {
    const { runtime, stackName } = await start({ version: 1, mapping: { BatchSize: 10 } });
    const poller = runtime.pollers.get('Trigger');
    const redeploy = (mapping: Record<string, unknown>) =>
      runtime.update(writeAssembly(stackName, { version: 1, mapping }));
    const update = await redeploy({ BatchSize: 4, ScalingConfig: { MaximumConcurrency: 2 } });
    expect(update).toEqual({
      updated: [],
      restartNeeded: [],
      mappings: ['Trigger: batch size 10 → 4, concurrency none → 2'],
    });
    expect(poller?.settings).toMatchObject({
      batchSize: 4,
      batchingWindowSeconds: 0,
      maxConcurrency: 2,
    });

    const refused = await redeploy({ BatchSize: 20, ScalingConfig: { MaximumConcurrency: 2 } });
    expect(refused.mappings).toEqual([
      'Trigger not updated: Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10',
    ]);
    expect(poller?.settings.batchSize).toBe(4);
    // The fix is compared with what runs, not with the refused template: both settings move.
    const fixed = await redeploy({
      BatchSize: 20,
      MaximumBatchingWindowInSeconds: 1,
      ScalingConfig: { MaximumConcurrency: 2 },
    });
    expect(fixed.mappings).toEqual(['Trigger: batch size 4 → 20, batching window 0 → 1']);
  });

  it('updates an alarm the new synthesis changes, keeping its state, and leaves a hand edit of one it does not change, as CloudFormation does', async () => {
    const { runtime, stackName } = await start({ version: 1, errorsThreshold: 1 });
    const cw = new CloudWatchClient({
      endpoint: runtime.endpoint,
      region: runtime.region,
      credentials: LOCAL_CREDENTIALS,
    });
    const describe = async () =>
      Object.fromEntries(
        (
          (await cw.send(new DescribeAlarmsCommand({ AlarmNamePrefix: `${stackName}-` })))
            .MetricAlarms ?? []
        ).map((a) => [a.AlarmName?.slice(stackName.length + 1), a]),
      );
    await cw.send(new DisableAlarmActionsCommand({ AlarmNames: [`${stackName}-Throttles`] }));
    // One error: the Errors alarm fires at a threshold of 1.
    await expect(runtime.invoke('Fn', { fail: true })).rejects.toThrow('asked to fail');
    expect((await describe()).Errors?.StateValue).toBe('ALARM');

    await runtime.update(writeAssembly(stackName, { version: 1, errorsThreshold: 5 }));
    const after = await describe();
    expect(after.Errors).toMatchObject({ Threshold: 5 });
    // Evaluated again against the new threshold: one error no longer crosses it.
    expect(after.Errors?.StateValue).toBe('OK');
    expect(after.Throttles).toMatchObject({ ActionsEnabled: false });

    await runtime.update(writeAssembly(stackName, { version: 1 }));
    expect(await describe()).toEqual({});
    cw.destroy();
  });

  it('keeps the running code when the new synthesis cannot run', async () => {
    const { runtime, stackName } = await start({ version: 1 });
    await expect(
      runtime.update(writeAssembly(stackName, { version: 2, withoutBundle: true })),
    ).rejects.toThrow(/no bundled handler index\.\{mjs,js,cjs\}/);
    expect((await invoke(runtime)).version).toBe(1);
  });
});
