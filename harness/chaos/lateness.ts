/**
 * Events later than the allowed lateness, as a fault. A producer's clock runs ahead: one batch
 * far past the stream moves the watermark beyond every hour of it; the finalizer runs twice (an
 * hour one run closes is final on the next); then batches with events in hours now final are
 * sent, some twice, some with an event in an open hour too, and the rest of the stream (whose
 * late events now fall in final hours as well) follows.
 */
import { RetryableError } from '../../shared/errors.ts';
import type { FinalizerRun } from '../../shared/finalizer.ts';
import { InjectedCrash, ThrottlingException } from '../faults.ts';
import type { GeneratedEvent } from '../generate.ts';
import { hourOfEventTime } from '../model.ts';
import type { Delivery } from './delivery.ts';
import type { Dice } from './dice.ts';
import type { World } from './world.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

type Batch = { batchId: string; events: GeneratedEvent[] };

export interface LateSend {
  /** Every batch sent: the one ahead and the late ones (each applied once, or refused in part). */
  readonly batches: readonly Batch[];
  /** The late batches, and the hours they touch that were final when they were sent. */
  readonly late: readonly { readonly batch: Batch; readonly finalHours: readonly string[] }[];
  /** Hours final when the late batches were sent. */
  readonly finalHours: readonly string[];
}

/** Runs the finalizer until one run completes; crashes injected into it are retried. */
export const finalizeDespiteFaults = async (world: World): Promise<FinalizerRun[]> => {
  const runs: FinalizerRun[] = [];
  for (let attempt = 1; ; attempt++) {
    try {
      runs.push(await world.finalize());
      return runs;
    } catch (error) {
      // The faults drawn for the schedule fire in the finalizer too; the next run redoes it all.
      const injected =
        error instanceof InjectedCrash ||
        error instanceof ThrottlingException ||
        error instanceof RetryableError;
      if (!injected || attempt >= 8) throw error;
    }
  }
};

/** Two completed finalizer runs: whatever the first closes, the second makes final. */
export const finalizeTwice = async (world: World): Promise<string[]> => {
  const runs = [...(await finalizeDespiteFaults(world)), ...(await finalizeDespiteFaults(world))];
  await world.versions.observe();
  return runs.flatMap((r) => r.finalized.map((f) => f.hour));
};

/** An order's first event at `ms` (event ids are unique within a batch: the order's id). */
const eventAt = (template: GeneratedEvent, orderId: string, ms: number): GeneratedEvent => ({
  ...template,
  orderId,
  eventId: `${orderId}-e1`,
  eventTime: new Date(ms).toISOString().replace('.000Z', 'Z'),
});

export const sendLateEvents = async (
  world: World,
  delivery: Delivery,
  dice: Dice,
  seed: number,
  stream: readonly Batch[],
): Promise<LateSend> => {
  const events = stream.flatMap((b) => b.events);
  const template = events[0];
  if (!template) return { batches: [], late: [], finalHours: [] };
  const latest = Math.max(...events.map((e) => Date.parse(e.eventTime)));
  // Far enough ahead that the watermark (latest minus 120 minutes, in 15-minute steps) passes
  // the end of the stream's last hour.
  const aheadMs = Math.ceil(latest / HOUR) * HOUR + 150 * MINUTE;
  const ahead: Batch = {
    batchId: `chaos-ahead-${seed}`,
    events: [eventAt(template, `chaos-ahead-${seed}`, aheadMs)],
  };
  await delivery.send([JSON.stringify(ahead)]);
  await delivery.runAll();
  const finalHours = [...new Set(await finalizeTwice(world))].sort();
  // A batch in progress (failed, waiting for its redelivery) can hold every hour back: then
  // the late events go to the stream's first hour, open or not.
  const targets = finalHours.length > 0 ? finalHours : [hourOfEventTime(template.eventTime)];
  const late: { batch: Batch; finalHours: string[] }[] = [];
  for (let i = dice.int(1, 3); i > 0; i--) {
    const batchId = `chaos-late-${seed}-${late.length}`;
    const batchEvents: GeneratedEvent[] = [];
    for (let j = dice.int(1, 4); j > 0; j--) {
      const hourMs = Date.parse(dice.pick(targets));
      batchEvents.push(
        eventAt(
          template,
          `${batchId}-${j}`,
          hourMs + dice.int(0, 59) * MINUTE + dice.int(0, 59) * 1000,
        ),
      );
    }
    // Sometimes an event in an open hour too: the rest of a batch applies whatever the policy.
    if (dice.chance(0.5)) batchEvents.push(eventAt(template, `${batchId}-open`, aheadMs + MINUTE));
    const batch = { batchId, events: batchEvents };
    late.push({
      batch,
      finalHours: [
        ...new Set(
          batchEvents
            .map((e) => hourOfEventTime(e.eventTime))
            .filter((h) => finalHours.includes(h)),
        ),
      ],
    });
  }
  // Some late batches sent twice (a producer retrying): applied, or refused, once.
  await delivery.send(
    late.flatMap(({ batch }) => {
      const body = JSON.stringify(batch);
      return dice.chance(0.3) ? [body, body] : [body];
    }),
  );
  return { batches: [ahead, ...late.map((l) => l.batch)], late, finalHours };
};
