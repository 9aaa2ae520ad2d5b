/**
 * The synthesized stack, running locally: emulators behind one edge endpoint, every queue,
 * table and bucket provisioned from the template, a poller per event source mapping that
 * invokes the bundled handler code in Lambda-like environments (each function held to its
 * reserved concurrency), and its EventBridge rules and Scheduler schedules run on their times.
 */
import { randomUUID } from 'node:crypto';
import { queueDepth } from '../adapters/sqs.ts';
import { templateAlarms } from './alarms.ts';
import { type AsyncInvocations, type AsyncOutcome, asyncInvocations } from './async-invocations.ts';
import { adminClients } from './clients.ts';
import { localResources } from './cloudformation.ts';
import { installCrashHooks } from './crash-hooks.ts';
import { LOCAL_CREDENTIALS, startEmulators } from './emulators.ts';
import { EnvironmentPool } from './environment-pool.ts';
import { functionLogs } from './function-logs.ts';
import { changedFunctions, changesNeedingRestart } from './hot-swap.ts';
import { reconfigured } from './lambda-configuration.ts';
import { stackAsyncFunctions } from './lambda-destinations.ts';
import { LambdaEnvironment } from './lambda-environment.ts';
import { applyMappingChanges, type LocalMapping } from './lambda-mappings-api.ts';
import { eachLine, emfDatapoints } from './metrics.ts';
import { waitFor } from './net.ts';
import { mappingUuid, pollerMapping } from './poller-mapping.ts';
import { functionsOnRunningStack, LOCAL_ACCOUNT, provisionStack } from './provision.ts';
import { startRuleRunner } from './rule-runner.ts';
import type { LocalRuntime, LocalRuntimeOptions, StackUpdate } from './runtime-types.ts';
import { startSchedulerRunner } from './scheduler.ts';
import { type BatchReport, SqsPoller } from './sqs-poller.ts';
import { loadStack, resolve, type Template } from './template.ts';
import { mappingRetryDeadline, retryWhileThrottled } from './throttling.ts';
import type { LocalEventSourceMapping } from './triggers.ts';

export type { CrashRule } from './crash-hooks.ts';
export type { LocalRuntime, LocalRuntimeOptions, StackUpdate } from './runtime-types.ts';

/** Slots of a mapping whose template sets no maximum concurrency (Lambda scales it further). */
const DEFAULT_CONCURRENCY = 5;

export const startLocalRuntime = async (options: LocalRuntimeOptions): Promise<LocalRuntime> => {
  const stackTemplate = loadStack(options.assemblyDir, options.stackName);
  const ownsEmulators = options.emulators === undefined;
  const emulators =
    options.emulators ??
    (await startEmulators({
      ...(options.port === undefined ? {} : { port: options.port }),
      ...(options.warn ? { warn: options.warn } : {}),
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      ...(options.onFailure ? { onFailure: options.onFailure } : {}),
      ...(options.dynamoLocal ? { dynamoLocal: options.dynamoLocal } : {}),
      ...(options.readLagMs === undefined ? {} : { readLagMs: options.readLagMs }),
    }));
  const runtimeId = Math.random().toString(36).slice(2, 8).toUpperCase();

  const pollers = new Map<string, SqsPoller>();
  // Pollers of mappings deleted through Lambda's API, finishing their batches.
  const retired: Promise<void>[] = [];
  let asyncRuns: AsyncInvocations | undefined;
  const logs = functionLogs(options.logDir);
  let pool: EnvironmentPool | undefined;
  let unregisterFunctions = () => {};
  let removeHooks = () => {};
  let removeAlarms = () => {};
  const shutdown = async () => {
    asyncRuns?.stop();
    removeAlarms();
    unregisterFunctions();
    await Promise.all([...pollers.values()].map((p) => p.stop()));
    await Promise.all(retired);
    await pool?.dispose();
    logs.close();
    if (ownsEmulators) await emulators.stop();
    else removeHooks();
  };
  try {
    const clients = adminClients(emulators.endpoint, emulators.region);
    let stack = await provisionStack(
      options.localStackName
        ? { ...stackTemplate, stackName: options.localStackName }
        : stackTemplate,
      clients,
      emulators.region,
    );
    const createdAt = new Date();
    const physicalIdOf = (logicalId: string, type: string) =>
      stack.physical.get(logicalId)?.ref ??
      (type === 'AWS::Events::Rule'
        ? stack.schedules.find((s) => s.logicalId === logicalId)?.ruleName
        : undefined) ??
      (type === 'AWS::Lambda::EventSourceMapping'
        ? mappingUuid(stack.stackName, logicalId)
        : undefined) ??
      stack.alarms.find((a) => a.logicalId === logicalId)?.alarm.AlarmName;
    const register = (template: Template) =>
      emulators.registerStack({
        name: stack.stackName,
        outputs: stack.outputs,
        createdAt,
        template,
        resources: () => localResources(stack.stackName, template, physicalIdOf),
      });
    register(stackTemplate.template);
    // As CloudFormation creates them with the stack, and deletes them with it.
    removeAlarms = emulators.alarms.adopt(stack.alarms, Date.now());
    logs.begin(stack.functions.map((f) => f.name));
    const hooks = installCrashHooks(emulators, options.onCall);
    removeHooks = hooks.remove;
    const { byKey } = hooks;

    let environmentsStarted = 0;
    const environments = new EnvironmentPool(
      stack.functions,
      (fn) => {
        // Its number in the keys it signs with: fixed for its life, as environments come and go.
        const serial = environmentsStarted++;
        const env: LambdaEnvironment = new LambdaEnvironment(fn, {
          baseEnvironment: {
            AWS_REGION: emulators.region,
            AWS_DEFAULT_REGION: emulators.region,
            AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
            AWS_ENDPOINT_URL: emulators.endpoint,
            S3_FORCE_PATH_STYLE: 'true',
            AWS_EC2_METADATA_DISABLED: 'true',
            TZ: 'UTC',
          },
          accessKeyId: (generation) => {
            const key = `LOCAL${runtimeId}E${serial}G${generation}`;
            byKey.set(key, env);
            return key;
          },
          output: (stream) => {
            logs.output(fn.name)(stream);
            // CloudWatch Logs extracts the metrics a function logs in the embedded metric format.
            eachLine(stream, (line) => {
              for (const datum of emfDatapoints(line)) emulators.metrics.put(datum);
            });
          },
          platform: logs.platform(fn.name),
        });
        return env;
      },
      (datum) => emulators.metrics.put(datum),
    );
    pool = environments;

    /** A poller for the mapping, started: one per mapping of the template, or created since. */
    const startMapping = (mapping: LocalEventSourceMapping): LocalMapping | undefined => {
      const fn = stack.functions.find((f) => f.logicalId === mapping.functionLogicalId);
      const queue = stack.queues.find((q) => q.logicalId === mapping.queueLogicalId);
      if (!fn || !queue) return undefined;
      const concurrency =
        mapping.maxConcurrency ?? options.defaultMaxConcurrency ?? DEFAULT_CONCURRENCY;
      const poller = new SqsPoller({
        sqs: clients.sqs,
        queueUrl: queue.url,
        queueArn: queue.arn,
        region: emulators.region,
        batchSize: mapping.batchSize,
        batchingWindowSeconds: mapping.batchingWindowSeconds,
        maxConcurrency: concurrency,
        reportBatchItemFailures: mapping.reportBatchItemFailures,
        filters: mapping.filters,
        invoke: (_slot, event, { receivedAtMs }) =>
          retryWhileThrottled(() => environments.run(fn.logicalId, (env) => env.invoke(event)), {
            untilMs: mappingRetryDeadline(
              receivedAtMs,
              Number(queue.attributes.VisibilityTimeout ?? 30),
            ),
            // Disabled or stopping: the messages go back to the queue rather than wait.
            abandoned: () => poller.paused || !poller.running,
          }),
        ...(options.retryDelaySeconds === undefined
          ? {}
          : { retryDelaySeconds: options.retryDelaySeconds }),
        ...(options.onBatch
          ? { onBatch: (report: BatchReport) => options.onBatch?.(fn, report) }
          : {}),
      });
      pollers.set(mapping.logicalId, poller);
      // Created disabled (`Enabled: false`): it waits for UpdateEventSourceMapping, as on AWS.
      if (!mapping.enabled) poller.pause();
      poller.start();
      return pollerMapping(poller, {
        stackName: stack.stackName,
        mapping,
        functionName: fn.name,
        queue,
        functionTimeoutSeconds: () =>
          environments.functions.find((f) => f.logicalId === fn.logicalId)?.timeoutSeconds ?? 3,
        defaultConcurrency: options.defaultMaxConcurrency ?? DEFAULT_CONCURRENCY,
      });
    };
    const localMappings = stack.mappings.flatMap((m) => startMapping(m) ?? []);
    const idle = async () => {
      if ([...pollers.values()].some((p) => p.inFlight > 0)) return false;
      for (const q of stack.queues.filter((x) => localMappings.some((m) => m.queueArn === x.arn))) {
        const depth = await queueDepth(clients.sqs, q.url);
        if (depth.visible + depth.inFlight + depth.delayed > 0) return false;
      }
      return [...pollers.values()].every((p) => p.inFlight === 0);
    };

    /** Like Lambda's Invoke API: an idle environment of the function, or a new one. */
    const invoke = async (name: string, event: unknown, log?: string[], requestId?: string) => {
      const fn = stack.functions.find((f) => f.logicalId === name || f.name === name);
      if (!fn) throw new Error(`no function ${name} in ${stack.stackName}`);
      return environments.run(fn.logicalId, (env) => env.invoke(event, log, requestId));
    };
    const invocations: AsyncInvocations = asyncInvocations({
      ...stackAsyncFunctions({
        functions: () => stack.functions,
        queues: stack.queues,
        sqs: clients.sqs,
        invoke: (fn, event, requestId) => invoke(fn, event, undefined, requestId),
        enqueue: (fn, event) => invocations.enqueue(fn, event),
      }),
      ...(options.asyncRetryDelaysMs ? { retryDelaysMs: options.asyncRetryDelaysMs } : {}),
      ...(options.warn ? { warn: options.warn } : {}),
    });
    asyncRuns = invocations;
    const reportScheduled = (schedule: { functionLogicalId: string }, outcome: AsyncOutcome) => {
      const fn = stack.functions.find((f) => f.logicalId === schedule.functionLogicalId);
      if (fn) options.onScheduled?.(fn, outcome);
    };
    const ruleRunner = startRuleRunner({
      schedules: stack.schedules,
      region: emulators.region,
      account: LOCAL_ACCOUNT,
      invocations,
      invoke: (fn, event) => invoke(fn, event),
      report: reportScheduled,
    });
    const schedulerRunner = startSchedulerRunner({
      schedules: stack.schedulerSchedules,
      invocations,
      report: reportScheduled,
      ...(options.warn ? { warn: options.warn } : {}),
    });

    // The edge answers Lambda's API for this stack's functions until the runtime stops.
    unregisterFunctions = emulators.registerFunctions({
      region: emulators.region,
      // Read at each request: `update` replaces them.
      get functions() {
        return stack.functions;
      },
      mappings: localMappings,
      mappingControl: {
        queue: (arn) => stack.queues.find((q) => q.arn === arn),
        create: (functionName, queueArn, settings, enabled) => {
          const fn = stack.functions.find((f) => f.name === functionName);
          const queue = stack.queues.find((q) => q.arn === queueArn);
          const m =
            fn &&
            queue &&
            startMapping({
              ...settings,
              logicalId: `Created${randomUUID()}`,
              functionLogicalId: fn.logicalId,
              queueLogicalId: queue.logicalId,
              enabled,
              filters: settings.filters ?? [],
            });
          if (!m) throw new Error(`no function ${functionName} or queue ${queueArn} to map`);
          localMappings.push(m);
          return m;
        },
        delete: (uuid) => {
          const [m] = localMappings.splice(
            localMappings.findIndex((x) => x.uuid === uuid),
            1,
          );
          const poller = m && pollers.get(m.logicalId);
          if (m) pollers.delete(m.logicalId);
          if (poller) retired.push(poller.stop());
        },
      },
      rules: {
        stackName: stack.stackName,
        region: emulators.region,
        account: LOCAL_ACCOUNT,
        runner: ruleRunner,
        functionArn: (id) => stack.functions.find((f) => f.logicalId === id)?.arn,
        functionOf: (arn) => stack.functions.find((f) => f.arn === arn)?.logicalId,
      },
      scheduler: {
        runner: schedulerRunner,
        functionArn: (id) => stack.functions.find((f) => f.logicalId === id)?.arn,
        functionOf: (arn) => stack.functions.find((f) => f.arn === arn)?.logicalId,
      },
      invoke,
      invokeAsync: (name, event) => {
        const fn = stack.functions.find((f) => f.name === name || f.logicalId === name);
        if (fn) invocations.enqueue(fn.logicalId, event);
      },
      reservedConcurrency: (name) => {
        const fn = stack.functions.find((f) => f.name === name);
        return fn && environments.reservedConcurrency(fn.logicalId);
      },
      updateConfiguration: (name, change) => {
        const current = stack.functions.find((f) => f.name === name);
        if (!current) throw new Error(`no function ${name} in ${stack.stackName}`);
        const fn = reconfigured(current, change);
        environments.update([fn]);
        stack = { ...stack, functions: environments.functions };
        return fn;
      },
      setReservedConcurrency: (name, value) => {
        const fn = stack.functions.find((f) => f.name === name);
        if (fn) environments.setReservedConcurrency(fn.logicalId, value);
      },
      logFile: logs.fileOf,
    });
    // The template last deployed: as CloudFormation, a function or mapping is updated when the
    // next template changes it, and one it leaves alone keeps what was changed by hand since.
    let deployed = stackTemplate.template;
    let deployedFunctions = stack.functions;
    const update = async (assemblyDir: string): Promise<StackUpdate> => {
      const next = loadStack(assemblyDir, options.stackName);
      const functions = functionsOnRunningStack(next, stack);
      const updated = changedFunctions(deployedFunctions, functions);
      deployedFunctions = functions;
      const restartNeeded = changesNeedingRestart(stackTemplate.template, next.template);
      if (updated.length > 0) {
        environments.update(updated);
        stack = { ...stack, functions: environments.functions };
      }
      const applied = applyMappingChanges(deployed, next.template, localMappings);
      deployed = applied.deployed;
      // Alarms, as CloudFormation updates them: changed in place, their state kept.
      const { alarms } = templateAlarms(Object.entries(next.template.Resources), {
        stackName: stack.stackName,
        region: emulators.region,
        account: LOCAL_ACCOUNT,
        resolveValue: (value) =>
          resolve(value, {
            region: emulators.region,
            accountId: LOCAL_ACCOUNT,
            stackName: stack.stackName,
            resources: stack.physical,
          }),
      });
      removeAlarms = emulators.alarms.redeploy(stack.alarms, alarms, Date.now());
      stack = { ...stack, alarms };
      // As `cdk deploy` leaves it: GetTemplate answers the new template.
      register(next.template);
      return { updated, restartNeeded, mappings: applied.lines };
    };
    return {
      endpoint: emulators.endpoint,
      region: emulators.region,
      get stack() {
        return stack;
      },
      emulators,
      clients,
      pollers,
      environments: environments.environments,
      throttles: environments.throttles,
      crashes: hooks.crashes,
      addCrash: hooks.addCrash,
      drain: async ({ timeoutMs = 60_000 } = {}) => {
        // Idle twice in a row: a message handed from one function to the next is never missed.
        let streak = 0;
        await waitFor(
          async () => {
            streak = (await idle()) ? streak + 1 : 0;
            return streak >= 2;
          },
          { timeoutMs, what: 'the queues to drain', intervalMs: 50 },
        );
      },
      invoke,
      runSchedule: async (name) => {
        // The rules as they are now: one deleted by hand no longer runs, one put back does.
        const schedule = ruleRunner.schedules().find((sch) => {
          const fn = stack.functions.find((f) => f.logicalId === sch.functionLogicalId);
          return fn && (fn.logicalId === name || fn.name === name || fn.logicalId.startsWith(name));
        });
        if (!schedule) throw new Error(`no scheduled rule runs ${name} in ${stack.stackName}`);
        return ruleRunner.runNow(schedule);
      },
      update,
      stop: shutdown,
    };
  } catch (error) {
    await shutdown();
    throw error;
  }
};
