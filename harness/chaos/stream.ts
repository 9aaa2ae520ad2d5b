/** What a schedule sends: a generated stream, one batch id reused with other content, reordered. */
import { CURRENCIES } from '../../shared/currencies.ts';
import { type GeneratedStream, generateStream } from '../generate.ts';
import type { Dice } from './dice.ts';

export interface ScheduleStream {
  readonly stream: GeneratedStream;
  /** The batch whose id an impostor reuses with other content. */
  readonly victim: GeneratedStream['batches'][number] | undefined;
  readonly impostor: string | undefined;
  /** Every body in sending order: duplicates, invalid bodies and the impostor included. */
  readonly sends: readonly string[];
  /** Whether the batches reach the contract's bounds (up to 500 events, every currency). */
  readonly wide: boolean;
}

export const drawStream = (dice: Dice, seed: number, orders: number): ScheduleStream => {
  // Some schedules send batches at the contract's bounds: up to 500 events over many hours and
  // every ISO 4217 currency, so commits split into several parts.
  const wide = dice.chance(0.06);
  const stream = generateStream({
    orders: wide ? 160 : orders,
    hours: wide ? dice.int(24, 96) : dice.int(2, 6),
    seed,
    batchSize: wide ? 500 : dice.int(2, 12),
    duplicateRate: 0.2,
    lateRate: 0.15,
    invalidRate: 0.1,
    ...(wide || dice.chance(0.5) ? { currencies: CURRENCIES } : {}),
  });
  const victim = stream.batches[dice.int(0, stream.batches.length - 1)];
  const impostor = victim
    ? JSON.stringify({
        batchId: victim.batchId,
        events: victim.events.map((e, i) => (i === 0 ? { ...e, customerId: 'impostor' } : e)),
      })
    : undefined;
  // At least one invalid body, so the quarantine's call site is always exercised.
  const invalid = JSON.stringify({ batchId: `chaos-invalid-${seed}`, events: [] });
  const lines = [...stream.lines, invalid, ...(impostor ? [impostor] : [])];
  // Reordering, and duplicate sends (a producer retrying: new message ids).
  const sends = dice.shuffle(lines.flatMap((line) => (dice.chance(0.1) ? [line, line] : [line])));
  return { stream, victim, impostor, sends, wide };
};
