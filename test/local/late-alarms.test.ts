/**
 * The late-event alarms on the local edge, fired from the metrics the functions log: an event
 * later than its hour's final (latePolicy amend, the default) and events refused for an hour
 * already closed (latePolicy quarantine). Each runs the product as deployed in a runtime of its
 * own, whose table holds only its own hours, with the finalizer run through Lambda's API as its
 * schedule would.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import * as v from 'valibot';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { DynamoOrderReader } from '../../adapters/dynamo-order-reader.ts';
import { S3Store } from '../../adapters/s3.ts';
import { readRejects } from '../../adapters/s3-quarantine.ts';
import { OnceflowStack } from '../../infra/onceflow-stack.ts';
import { readSettings } from '../../infra/settings.ts';
import { LOCAL_CREDENTIALS } from '../../local/emulators.ts';
import { waitFor } from '../../local/net.ts';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { type FinalizerRun, FinalizerRunSchema } from '../../shared/finalizer.ts';
import { hourObjectKey } from '../../shared/keys.ts';
import { synthAssembly } from '../support/assembly.ts';
import { stackAlarm, statisticOf } from '../support/cloudwatch.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { sharedDynamoLocal } from '../support/emulators.ts';
import { batch, H09 } from '../support/hours.ts';
import { parseBatch } from '../support/json.ts';
import { uniqueName } from '../support/names.ts';

/** A local runtime of the given assembly, with a CloudWatch client and readers of its state. */
const startRuntime = async (assembly: { assemblyDir: string; stackName: string }) => {
  const runtime: LocalRuntime = await startLocalRuntime({
    assemblyDir: assembly.assemblyDir,
    stackName: assembly.stackName,
    localStackName: uniqueName('late-alarms'),
    dynamoLocal: sharedDynamoLocal(),
    retryDelaySeconds: 1,
    logDir: mkdtempSync(join(tmpdir(), 'onceflow-late-alarms-')),
  });
  const cw = new CloudWatchClient({
    endpoint: runtime.endpoint,
    region: runtime.region,
    credentials: LOCAL_CREDENTIALS,
  });
  onTestFinished(async () => {
    cw.destroy();
    await runtime.stop();
  });
  const { outputs } = runtime.stack;
  const finalizer = runtime.stack.functions.find((f) => f.logicalId.startsWith('FinalizeHours'));
  if (!finalizer) throw new Error('the stack has no finalizer');
  const send = async (...bodies: string[]) => {
    for (const body of bodies)
      await runtime.clients.sqs.send(
        new SendMessageCommand({ QueueUrl: outputs.OrdersQueueUrl, MessageBody: body }),
      );
  };
  const orders = new DynamoOrderReader(runtime.clients.dynamo, outputs.TableName ?? '');
  const store = new S3Store(runtime.clients.s3, outputs.BucketName ?? '');
  // The service dimension is the stack's name as synthesized, not the local copy's.
  const statistic = (metric: string, s: 'Sum' | 'SampleCount') =>
    statisticOf(cw, assembly.stackName, metric, s);
  return {
    runtime,
    store,
    statistic,
    stateOf: async (prefix: string) =>
      (await stackAlarm(cw, runtime.stack.stackName, prefix)).StateValue,
    /** Sends each body to the orders queue. */
    send,
    order: (orderId: string) => orders.getOrder(orderId),
    /** Sends each body and waits until every order of each is applied. */
    apply: async (...bodies: string[]) => {
      await send(...bodies);
      const orderIds = bodies.flatMap((b) => parseBatch(b).events.map((e) => e.orderId));
      await waitFor(
        async () => (await Promise.all(orderIds.map((id) => orders.getOrder(id)))).every(Boolean),
        { timeoutMs: DEADLINE_MS, what: 'the batches to be applied' },
      );
    },
    /**
     * Finalizer runs through Lambda's API, as its schedule would run them, until one does
     * something: a run may find a batch applied but not yet committed (held by it) or the
     * watermark not yet moved, and leave the hour for the next.
     */
    finalize: async () => {
      let run: FinalizerRun | undefined;
      await waitFor(
        async () => {
          run = v.parse(FinalizerRunSchema, await runtime.invoke(finalizer.name, {}));
          return run.finalized.length + (run.closed?.length ?? 0) > 0;
        },
        { timeoutMs: DEADLINE_MS, what: 'a finalizer run to close or finalize an hour' },
      );
      return run;
    },
  };
};

const HourObjectSchema = v.object({
  events: v.number(),
  final: v.optional(v.boolean()),
  amendments: v.optional(v.number()),
});

describe('late-event alarms on the local edge', () => {
  it('fires LateAfterFinal when an event arrives after its hour was final, under latePolicy amend', async () => {
    const r = await startRuntime(inject('assembly'));
    expect(await r.stateOf('AlarmsLateAfterFinal')).toBe('OK');
    // 12:40 moves the watermark past 09:00's end (allowedLatenessMinutes 120).
    await r.apply(batch('09:10'), batch('12:40'));
    expect((await r.finalize())?.finalized.map((f) => [f.hour, f.events])).toEqual([[H09, 1]]);

    await r.apply(batch('09:55'));
    // The aggregate republishes the hour with its amendment, and logs the metric as it does.
    await waitFor(async () => (await r.statistic('LateAfterFinal', 'SampleCount')) >= 1, {
      timeoutMs: DEADLINE_MS,
      what: 'the amended hour’s LateAfterFinal to be published',
    });
    expect(await r.statistic('LateAfterFinal', 'Sum')).toBe(1);
    const hour = v.parse(
      HourObjectSchema,
      JSON.parse((await r.store.getText(hourObjectKey(H09))) ?? ''),
    );
    expect(hour).toMatchObject({ final: true, amendments: 1, events: 2 });
    expect(await r.stateOf('AlarmsLateAfterFinal')).toBe('ALARM');
    // Under amend nothing is refused: every batch applied logged TooLateEvents 0.
    expect(await r.statistic('TooLateEvents', 'SampleCount')).toBeGreaterThanOrEqual(3);
    expect(await r.statistic('TooLateEvents', 'Sum')).toBe(0);
    expect(await r.stateOf('AlarmsTooLateEvents')).toBe('OK');
  });

  it('fires TooLateEvents when events arrive for a closed hour, under latePolicy quarantine', async () => {
    const assembly = synthAssembly((app, name) => {
      const settings = readSettings((k) => (k === 'latePolicy' ? 'quarantine' : undefined));
      return new OnceflowStack(app, name, { settings });
    });
    onTestFinished(() => assembly.remove());
    const r = await startRuntime(assembly);
    expect(r.runtime.stack.outputs.LatePolicy).toBe('quarantine');
    await r.apply(batch('09:10'), batch('12:40'));
    // The first run to act closes the hour; it would be final a grace later.
    expect(await r.finalize()).toMatchObject({ finalized: [], closed: [H09], heldBy: 'closing' });

    // Two events for the closed hour and one for an open one: the two refused, the third applied.
    const late = batch('09:20', '09:55', '12:50');
    await r.send(late);
    await waitFor(async () => (await r.statistic('TooLateEvents', 'SampleCount')) >= 3, {
      timeoutMs: DEADLINE_MS,
      what: 'the late batch’s TooLateEvents to be published',
    });
    expect(await r.statistic('TooLateEvents', 'Sum')).toBe(2);
    expect(await r.stateOf('AlarmsTooLateEvents')).toBe('ALARM');
    const [reject, ...others] = await readRejects(r.store, { reason: 'too-late' });
    expect(others).toEqual([]);
    expect(reject?.batchId).toBe(parseBatch(late).batchId);
    expect(parseBatch(reject?.body ?? '').events.map((e) => e.eventTime)).toEqual([
      '2026-10-01T09:20:00Z',
      '2026-10-01T09:55:00Z',
    ]);
    // The metric is logged once the batch is done: its open-hour event applied, the others not.
    const [early, later, open] = parseBatch(late).events.map((e) => e.orderId);
    expect(await r.order(open ?? '')).toBeDefined();
    expect(await r.order(early ?? '')).toBeUndefined();
    expect(await r.order(later ?? '')).toBeUndefined();
    expect(await r.statistic('LateAfterFinal', 'SampleCount')).toBe(0);
    expect(await r.stateOf('AlarmsLateAfterFinal')).toBe('OK');
  });
});
