/**
 * `onceflow replay dlq --dry-run`: what a DLQ holds before it is moved back, each message with
 * the batch (or hour) it carries and what the ledger knows of that batch, read without taking
 * anything from the queue.
 */
import Table from 'cli-table3';
import * as v from 'valibot';
import { DynamoLedger } from '../../adapters/dynamo.ts';
import { peekMessages } from '../../adapters/sqs.ts';
import { SHOWN_ID_CHARACTERS, shortened, terminalSafe } from '../../local/render.ts';
import { batchState } from '../../shared/batch-report.ts';
import { mapLimit } from '../../shared/concurrency.ts';
import { namedBatchId } from '../../shared/schema.ts';
import type { Target } from '../target.ts';

/** What a body names, if anything: an orders batch's id or an aggregate notification's hour. */
const NamedBodySchema = v.looseObject({
  batchId: v.optional(v.string()),
  hour: v.optional(v.string()),
});

interface Names {
  readonly batchId?: string;
  readonly hour?: string;
  /** Whether the contract allows the batch id: only such an id can key a ledger entry. */
  readonly allowed: boolean;
}

const namesOf = (body: string): Names => {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { allowed: false };
  }
  const parsed = v.safeParse(NamedBodySchema, json);
  if (!parsed.success) return { allowed: false };
  const { batchId, hour } = parsed.output;
  return {
    ...(batchId === undefined ? {} : { batchId }),
    ...(hour === undefined ? {} : { hour }),
    allowed: namedBatchId(json) !== undefined,
  };
};

/**
 * `absent`: the ledger has no entry (never claimed, or expired after the retention). `invalid`:
 * the id is one the contract bans (empty, too long, other characters), so it keys no entry, and
 * moved back the body would be quarantined.
 */
export type LedgerView = 'applied' | 'pending' | 'absent' | 'invalid';

export interface DlqEntry {
  readonly messageId: string;
  readonly sentAt?: string;
  readonly receives?: number;
  readonly bytes: number;
  /** The body itself (`--json` only): to read, or to try with `onceflow invoke` before moving it. */
  readonly body: string;
  readonly batchId?: string;
  readonly hour?: string;
  /** For a body naming a batch: what the ledger holds of it. */
  readonly ledger?: LedgerView;
}

/** Ledger reads in flight. */
const LOOKUPS_IN_FLIGHT = 8;

/** Up to `limit` messages of the DLQ at `dlqUrl`, left in it, with what the ledger says. */
export const peekDlq = async (t: Target, dlqUrl: string, limit: number): Promise<DlqEntry[]> => {
  const messages = await peekMessages(t.clients.sqs, dlqUrl, { limit });
  const ledger = new DynamoLedger(t.clients.dynamo, t.output('TableName'));
  return mapLimit(messages, LOOKUPS_IN_FLIGHT, async (m) => {
    const { allowed, batchId, hour } = namesOf(m.body);
    // An id the contract bans may be no valid key at all (empty, over 2 KB): never looked up.
    const entry = batchId !== undefined && allowed ? await ledger.entry(batchId) : undefined;
    const view: LedgerView = !allowed ? 'invalid' : entry ? batchState(entry) : 'absent';
    return {
      messageId: m.messageId,
      ...(m.sentAtMs === undefined ? {} : { sentAt: new Date(m.sentAtMs).toISOString() }),
      ...(m.receives === undefined ? {} : { receives: m.receives }),
      bytes: Buffer.byteLength(m.body),
      body: m.body,
      ...(hour === undefined ? {} : { hour }),
      ...(batchId === undefined ? {} : { batchId, ledger: view }),
    };
  });
};

/** What the ledger holds of a batch, as the dry runs of `replay dlq` and `replay archive` print it. */
export const LEDGER_WORDS: Record<LedgerView, string> = {
  applied: 'applied',
  pending: 'pending',
  absent: 'not in the ledger',
  invalid: 'id outside the contract',
};

export const dlqTable = (entries: readonly DlqEntry[]): string => {
  const table = new Table({
    head: ['message', 'sent', 'receives', 'bytes', 'carries', 'ledger'],
    style: { head: [], border: [], compact: true },
  });
  for (const e of entries)
    table.push([
      e.messageId,
      e.sentAt ?? '',
      { hAlign: 'right', content: e.receives === undefined ? '' : String(e.receives) },
      { hAlign: 'right', content: String(e.bytes) },
      terminalSafe(
        e.batchId !== undefined
          ? `batch ${shortened(e.batchId, SHOWN_ID_CHARACTERS)}`
          : e.hour !== undefined
            ? `hour ${e.hour}`
            : 'no batch id',
      ),
      e.ledger === undefined ? '' : LEDGER_WORDS[e.ledger],
    ]);
  return table.toString();
};
