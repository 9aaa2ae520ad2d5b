/**
 * A producer re-sending after a timeout, mid-run: a random subset of the events already applied,
 * in a new order, regrouped into new batches under new ids, some with other content (another
 * amount, status or customer). Only batches the ledger shows applied with their own content are
 * drawn from, so the first content of every re-sent event is known: the original's.
 */
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { currencyExponent } from '../../shared/currencies.ts';
import { batchDigest } from '../../shared/digest.ts';
import { fromMinorUnits, toMinorUnits } from '../../shared/money.ts';
import { validateBatch } from '../../shared/schema.ts';
import { GENERATED_SOURCE, type GeneratedEvent } from '../generate.ts';
import type { Dice } from './dice.ts';
import type { World } from './world.ts';

export interface Resent {
  readonly batches: { batchId: string; events: GeneratedEvent[] }[];
  readonly events: number;
}

/** The event with one field changed, as a producer with a bug or a newer copy would send it. */
const altered = (e: GeneratedEvent, dice: Dice): GeneratedEvent => {
  const exponent = currencyExponent(e.currency) ?? 2;
  switch (dice.int(0, 2)) {
    case 0:
      return { ...e, amount: fromMinorUnits(toMinorUnits(e.amount, exponent) + 1n, exponent) };
    case 1:
      return { ...e, status: e.status === 'cancelled' ? 'refunded' : 'cancelled' };
    default:
      return { ...e, customerId: `${e.customerId}-resent` };
  }
};

const appliedAsSent = async (
  world: World,
  batches: readonly { batchId: string; events: GeneratedEvent[] }[],
) => {
  const ledger = new DynamoLedger(world.admin.dynamo, world.table);
  const applied: { batchId: string; events: GeneratedEvent[] }[] = [];
  for (const batch of batches) {
    const entry = await ledger.entry(batch.batchId);
    // The generator sends each batch with its source; the ledger's digest covers it.
    const parsed = validateBatch({ ...batch, source: GENERATED_SOURCE });
    if (!entry || !parsed.ok || entry.doneParts.size < entry.parts) continue;
    if (entry.digest === batchDigest(parsed.batch)) applied.push(batch);
  }
  return applied;
};

/** Events regrouped into new batches of 1–12 under new ids, in their given order. */
const regroup = (dice: Dice, prefix: string, events: readonly GeneratedEvent[]) => {
  const batches: Resent['batches'] = [];
  for (let i = 0; i < events.length; ) {
    const size = dice.int(1, 12);
    batches.push({ batchId: `${prefix}-${batches.length}`, events: events.slice(i, i + size) });
    i += size;
  }
  return batches;
};

/**
 * A producer whose first send timed out without failing, retrying at once: about 15% of the
 * stream's events, with the same content, regrouped into new batches sent among the batches
 * they came from, so that copies of one event race to settle their order from different
 * environments. The victim of the reused batch id is left out: its first event has two
 * contents, and which wins a race between them is the README's stated limit.
 */
export const regroupAlongside = (
  dice: Dice,
  seed: number,
  batches: readonly { batchId: string; events: GeneratedEvent[] }[],
  victim: string | undefined,
): Resent => {
  const picked = dice
    .shuffle(batches.filter((b) => b.batchId !== victim).flatMap((b) => b.events))
    .filter(() => dice.chance(0.15));
  return {
    batches: regroup(dice, `chaos-regroup-${seed}`, picked),
    events: picked.length,
  };
};

export const resendSomeEvents = async (
  world: World,
  dice: Dice,
  seed: number,
  batches: readonly { batchId: string; events: GeneratedEvent[] }[],
  send: (bodies: readonly string[]) => Promise<void>,
): Promise<Resent> => {
  const picked = dice
    .shuffle((await appliedAsSent(world, batches)).flatMap((b) => b.events))
    .filter(() => dice.chance(0.2))
    .map((e) => (dice.chance(0.15) ? altered(e, dice) : e));
  const resent = regroup(dice, `chaos-resend-${seed}`, picked);
  await send(resent.map((b) => JSON.stringify(b)));
  return { batches: resent, events: picked.length };
};
