/**
 * Choosing what to re-send after the table was restored to an earlier point: every archived
 * batch received since that point (by the arrival index, whatever its events' times), and every
 * batch the restored ledger shows pending (claimed before the point, completed after it: its
 * message is gone). Re-sending more is harmless: the ledger recognises what is applied.
 */
import { mapLimit } from '../shared/concurrency.ts';
import { InvalidMessageError } from '../shared/errors.ts';
import { archiveKeyOfArrival, arrivalHourPrefix } from '../shared/keys.ts';
import { parseBatchBody } from '../shared/schema.ts';
import { formatHour, hoursBetween } from '../shared/time.ts';
import type { DynamoLedger } from './dynamo.ts';
import type { S3Store } from './s3.ts';

const MS_PER_HOUR = 3_600_000;
const LISTINGS_IN_FLIGHT = 16;

export interface RecoverySelection {
  /** Received at or after this instant; the arrival index is read from the start of its hour. */
  readonly receivedFromMs?: number;
  /** Received before this instant; default now. */
  readonly receivedToMs?: number;
  /** Include the batches the ledger shows pending. */
  readonly pending?: boolean;
}

/** Archive keys of the batches received in the interval, by arrival hour, in arrival order. */
export const archiveKeysReceived = async (
  store: S3Store,
  fromMs: number,
  toMs: number,
): Promise<string[]> => {
  const first = Math.floor(fromMs / MS_PER_HOUR) * MS_PER_HOUR;
  // One listing per hour, several at a time: a day since the restore point is 24 round trips.
  const perHour = await mapLimit(
    [formatHour(first), ...hoursBetween(first + 1, toMs)],
    LISTINGS_IN_FLIGHT,
    (hour) => store.listKeys(arrivalHourPrefix(hour)),
  );
  return perHour.flat().flatMap((key) => archiveKeyOfArrival(key) ?? []);
};

/** The archive keys to re-send, each once, received ones first. */
export const recoveryKeys = async (
  store: S3Store,
  ledger: DynamoLedger,
  selection: RecoverySelection,
): Promise<string[]> => {
  const keys: string[] = [];
  if (selection.receivedFromMs !== undefined) {
    keys.push(
      ...(await archiveKeysReceived(
        store,
        selection.receivedFromMs,
        selection.receivedToMs ?? Date.now() + MS_PER_HOUR,
      )),
    );
  }
  if (selection.pending) keys.push(...(await ledger.pendingArchiveKeys()));
  return [...new Set(keys)];
};

/** The hours a set of batch bodies touches, as a half-open interval; undefined for none. */
export const eventHoursOf = (
  bodies: readonly string[],
): { fromMs: number; toMs: number } | undefined => {
  let fromMs = Number.POSITIVE_INFINITY;
  let toMs = Number.NEGATIVE_INFINITY;
  for (const body of bodies) {
    let events: readonly { hour: string }[];
    try {
      events = parseBatchBody(body, Number.POSITIVE_INFINITY).events;
    } catch (error) {
      // An archived body that no longer parses is re-sent anyway and quarantined on arrival.
      if (error instanceof InvalidMessageError) continue;
      throw error;
    }
    for (const e of events) {
      const hourMs = Date.parse(e.hour);
      fromMs = Math.min(fromMs, hourMs);
      toMs = Math.max(toMs, hourMs + 3_600_000);
    }
  }
  return fromMs < toMs ? { fromMs, toMs } : undefined;
};
