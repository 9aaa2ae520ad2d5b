/**
 * `onceflow replay rejects`: re-sends the quarantined messages that can succeed unchanged once a
 * setting changes: `too-late` parts, once `latePolicy: amend` is deployed. Nothing of them was
 * applied, so sending them is safe. Other reasons need their content corrected first (`rejects
 * --json` shows it; `send` takes the corrected lines), and a `beyond-retention` batch is never
 * re-sent by this command: its ledger entry may have expired, and applying it could count it twice.
 */
import { type Command, Option } from 'commander';
import * as v from 'valibot';
import { counted, terminalSafe } from '../../local/render.ts';
import { resentBatchId } from '../../shared/late-policy.ts';
import { inFlightOption, paceOf, rateOption, run, target } from '../program.ts';
import { CliError, type Target } from '../target.ts';
import { parseInstant } from './interval.ts';
import { listRejects } from './rejects.ts';
import { sendLines } from './send.ts';

export const REPLAYABLE_REASONS = ['too-late'] as const;
export type ReplayableReason = (typeof REPLAYABLE_REASONS)[number];

/** What a re-sent body must carry; the events go as they were stored. */
const StoredBatchSchema = v.looseObject({ batchId: v.string(), events: v.array(v.unknown()) });

/**
 * What to send again: a too-late part under its own new batch id (the original batch was
 * applied, its other hours included).
 */
const toResend = (key: string, body: string) => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    throw new CliError(`${key}: its body is not JSON`, { cause: error });
  }
  const result = v.safeParse(StoredBatchSchema, parsed);
  if (!result.success) throw new CliError(`${key}: its body is not an order batch`);
  const batchId = resentBatchId(body);
  return { key, batchId, body: JSON.stringify({ ...result.output, batchId }) };
};

/**
 * Refuses to send while the stack quarantines too-late parts: each would be refused again, and
 * quarantined a second time under its new batch id. The `LatePolicy` output says what the
 * functions were deployed with; a stack deployed before it existed is only warned about.
 */
const checkLatePolicy = (t: Target, warn: (message: string) => void): void => {
  const policy = t.outputs.LatePolicy;
  if (policy === 'quarantine') {
    throw new CliError(
      `${t.stackName} still quarantines too-late parts (its LatePolicy output is quarantine): sent now, they would be refused again. Deploy latePolicy amend first (cdk deploy -c latePolicy=amend), then run this again`,
    );
  }
  if (policy === undefined) {
    warn(
      `${t.stackName} has no LatePolicy output (deployed by an earlier onceflow): unless latePolicy amend is deployed, the parts are refused again`,
    );
  }
};

export interface RejectsReplay {
  /** Each reject, by key, and the batch id it was (or would be) sent under. */
  readonly parts: readonly { readonly key: string; readonly batchId: string }[];
  readonly sent: number;
  readonly refused: readonly { readonly key: string; readonly reason: string }[];
}

export const replayRejects = async (
  t: Target,
  reason: ReplayableReason,
  options: {
    readonly sinceMs?: number;
    readonly dryRun?: boolean;
    readonly inFlight?: number;
    readonly rate?: number;
    /** Told what the operator should know but does not stop the replay. */
    readonly warn?: (message: string) => void;
  } = {},
): Promise<RejectsReplay> => {
  if (!options.dryRun) checkLatePolicy(t, options.warn ?? (() => {}));
  const rejects = await listRejects(t, {
    reason,
    ...(options.sinceMs === undefined ? {} : { sinceMs: options.sinceMs }),
  });
  const resends = rejects.map((r) => toResend(r.key, r.body));
  const parts = resends.map(({ key, batchId }) => ({ key, batchId }));
  if (options.dryRun) return { parts, sent: 0, refused: [] };
  const { sent, refused } = await sendLines(
    t,
    resends.map((r) => r.body),
    paceOf(options),
  );
  return {
    parts,
    sent,
    refused: refused.map((r) => ({ key: parts[r.line - 1]?.key ?? '', reason: r.reason })),
  };
};

export const register = (replay: Command): void => {
  replay
    .command('rejects')
    .description(
      'send too-late parts again, once latePolicy amend is deployed (refused while the stack quarantines them), each under a new batch id of its own (re-running it applies nothing twice); other reasons need their content corrected and sent with send',
    )
    .addOption(
      new Option('--reason <reason>', 'which rejects')
        .choices(REPLAYABLE_REASONS)
        .makeOptionMandatory(),
    )
    .option('--since <time>', 'only messages sent at or after this RFC 3339 time or date')
    .option('--dry-run', 'list what would be sent, and under which batch id, without sending')
    .addOption(rateOption())
    .addOption(inFlightOption())
    .addHelpText(
      'after',
      '\nExample:\n  npx onceflow replay rejects --reason too-late --since 2026-10-01 --dry-run\n' +
        '  npx onceflow replay rejects --reason too-late && npx onceflow drain',
    )
    .action(
      run(
        async (o: {
          reason: ReplayableReason;
          since?: string;
          dryRun?: boolean;
          inFlight?: number;
          rate?: number;
        }) => {
          const t = await target();
          const result = await replayRejects(t, o.reason, {
            ...(o.since === undefined ? {} : { sinceMs: parseInstant('--since', o.since) }),
            ...(o.dryRun ? { dryRun: true } : {}),
            ...paceOf(o),
            warn: (message) => console.error(terminalSafe(`warning: ${message}`)),
          });
          if (o.dryRun) {
            for (const part of result.parts)
              console.log(`${terminalSafe(part.key)} → batch ${part.batchId}`);
            console.log(
              `${counted(result.parts.length, `${o.reason} reject`)} would be sent again`,
            );
            if (t.outputs.LatePolicy === 'quarantine')
              console.log('(not yet: the stack quarantines them; deploy latePolicy amend first)');
            return 0;
          }
          console.log(
            `re-sent ${counted(result.sent, `${o.reason} reject`)}; once drained they are applied`,
          );
          for (const r of result.refused)
            console.error(terminalSafe(`${r.key} was not sent: ${r.reason}`));
          return result.refused.length > 0 ? 1 : 0;
        },
      ),
    );
};
