/**
 * `onceflow drill snapshot` and `drill restore --at T`: rehearse the recovery from a
 * point-in-time restore on the local runtime. The snapshot stands in for PITR; the restore puts
 * the table back to it and runs the README's runbook step by step, printing each check.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { drainQueues } from '../../local/drain.ts';
import { DEFAULT_READ_LAG_MS } from '../../local/eventual-reads.ts';
import { counted } from '../../local/render.ts';
import {
  loadSnapshotAt,
  restoreTable,
  saveSnapshot,
  snapshotDir,
  snapshotTable,
} from '../../local/snapshot.ts';
import { formatHour } from '../../shared/time.ts';
import { globals, number, run, target } from '../program.ts';
import { CliError, runningLocalState, type Target } from '../target.ts';
import { parseInstant } from './interval.ts';
import { reconcile, verify } from './reconcile.ts';
import { replayArchive } from './replay.ts';
import { status } from './status.ts';

const localTarget = async (): Promise<Target> => {
  const t = await target();
  if (t.kind !== 'local') {
    throw new CliError(
      'drill runs against the local runtime; on AWS follow the runbook ("After a point-in-time restore" in the README)',
    );
  }
  return t;
};

const dirOf = (t: Target) => snapshotDir(globals().localState, t.stackName);

const step = (n: number, text: string) => console.log(`${n}. ${text}`);
const check = (ok: boolean, text: string) => {
  console.log(`   ${ok ? '✓' : '✗'} ${text}`);
  return ok;
};

export const register = (program: Command): void => {
  const drill = program
    .command('drill')
    .description('rehearse the recovery from a table restore on the local runtime');
  drill
    .command('snapshot')
    .description('take a copy of the local table (the stand-in for point-in-time recovery)')
    .addHelpText('after', '\nExample:\n  npx onceflow drill snapshot')
    .action(
      run(async () => {
        const t = await localTarget();
        const table = t.output('TableName');
        const snapshot = await snapshotTable(t.clients.dynamo, table);
        saveSnapshot(dirOf(t), table, snapshot);
        const at = new Date(snapshot.takenAtMs).toISOString();
        console.log(`copied ${counted(snapshot.items.length, 'item')} of ${table} at ${at}`);
        console.log(`rehearse the restore with: npx onceflow drill restore --at ${at}`);
        return 0;
      }),
    );
  drill
    .command('restore')
    .description(
      'put the local table back to its copy at or before T, then run the runbook and check it',
    )
    .requiredOption('--at <time>', 'the restore point (RFC 3339); the latest copy at or before it')
    .option(
      '--timeout <seconds>',
      'how long to wait for the queues to drain',
      number('seconds', 1),
      120,
    )
    .addHelpText('after', '\nExample:\n  npx onceflow drill restore --at 2026-12-01T03:00:00Z')
    .action(
      run(async (o: { at: string; timeout: number }) => {
        const atMs = parseInstant('--at', o.at);
        const t = await localTarget();
        const snapshot = loadSnapshotAt(dirOf(t), atMs);
        if (!snapshot) {
          throw new CliError(
            `no copy at or before ${o.at}: take one with \`onceflow drill snapshot\``,
          );
        }
        const since = new Date(snapshot.takenAtMs).toISOString();
        // The edge's lag (`npm start -- --read-lag`): the pending index may answer that old.
        const readLagMs = runningLocalState(globals().localState).readLagMs ?? DEFAULT_READ_LAG_MS;
        step(1, `restore the table to its copy of ${since}`);
        await restoreTable(t.clients.dynamo, t.output('TableName'), snapshot, { readLagMs });
        check(true, `${counted(snapshot.items.length, 'item')} put back`);

        step(2, `npx onceflow replay archive --received-from ${since} --pending`);
        const replayed = await replayArchive(t, {
          receivedFromMs: snapshot.takenAtMs,
          pending: true,
        });
        let ok = check(
          replayed.refused.length === 0,
          `re-sent ${counted(replayed.batches, 'archived batch', 'archived batches')} received since the copy or pending in it`,
        );
        // A batch claimed but never archived (its message failed before the archive write, and
        // now sits in a DLQ or is gone): nothing here can re-send it, and it stays pending.
        if (replayed.missing.length > 0)
          ok = check(
            false,
            `${counted(replayed.missing.length, 'archive')} the ledger names ${replayed.missing.length === 1 ? 'is' : 'are'} missing (${replayed.missing.join(', ')}): only their messages can apply them; look in the DLQs`,
          );

        step(3, 'npx onceflow drain');
        await drainQueues(
          t.clients.sqs,
          [t.output('OrdersQueueUrl'), t.output('AggregateQueueUrl')],
          {
            timeoutMs: o.timeout * 1000,
          },
        );
        check(true, 'both queues empty, nothing in flight');
        const drainedAtMs = Date.now();

        if (replayed.hours) {
          const [from, to] = [replayed.hours.fromMs, replayed.hours.toMs].map(formatHour);
          step(4, `npx onceflow reconcile --from ${from} --to ${to}`);
          const plans = await reconcile(t, replayed.hours, false);
          const changed = plans.filter((p) => p.action !== 'unchanged').length;
          check(true, `${counted(plans.length, 'hour')} recomputed, ${changed} rewritten`);
        } else step(4, 'nothing re-sent, nothing to reconcile');

        step(5, 'npx onceflow verify');
        const report = await verify(t);
        ok =
          check(
            report.differences.length === 0,
            `${counted(report.checked, 'hour')} checked, ${counted(report.differences.length, 'difference')}`,
          ) && ok;

        step(6, 'npx onceflow status');
        // Read through the pending index: an answer from before the drain could still show a
        // batch the drain applied. On AWS the index is usually a second behind at most.
        await sleep(Math.max(0, drainedAtMs + readLagMs - Date.now()));
        const s = await status(t);
        const dlqs = s.queues.filter((q) => q.name.endsWith('DLQ'));
        ok =
          check(
            s.ledger.pending === 0,
            `${counted(s.ledger.pending, 'batch', 'batches')} pending in the ledger`,
          ) && ok;
        ok =
          check(
            dlqs.every((q) => !('missing' in q) && q.visible + q.inFlight === 0),
            'both DLQs empty',
          ) && ok;
        console.log(ok ? 'the drill passed' : 'the drill found problems (see ✗ above)');
        return ok ? 0 : 1;
      }),
    );
};
