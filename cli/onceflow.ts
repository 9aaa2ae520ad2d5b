#!/usr/bin/env node
/**
 * `onceflow`: the operator CLI. Sends, generates, drains, inspects, replays and reconciles, on
 * the local stack, LocalStack or AWS.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SingleBar } from 'cli-progress';
import Table from 'cli-table3';
import { Command, InvalidArgumentError, Option } from 'commander';
import { DynamoOrderStore } from '../adapters/dynamo.ts';
import { S3Store } from '../adapters/s3.ts';
import {
  type ChaosSummary,
  formatSummary,
  runChaos,
  runSchedule,
  summaryOf,
} from '../harness/chaos.ts';
import { generateStream } from '../harness/generate.ts';
import { drainQueues } from '../local/drain.ts';
import { startEmulators } from '../local/emulators.ts';
import { eventsChart, hourlyTable, ordersTable } from '../local/render.ts';
import { projectAssembly } from '../local/synth.ts';
import { CURRENCIES, currencyExponent } from '../shared/currencies.ts';
import { parseInterval } from './commands/interval.ts';
import { reconcile, verify } from './commands/reconcile.ts';
import { listRejects } from './commands/rejects.ts';
import { type QueueName, replayArchive, replayDlq } from './commands/replay.ts';
import { sendLines } from './commands/send.ts';
import { status } from './commands/status.ts';
import {
  CliError,
  DEFAULT_LOCAL_STATE,
  resolveTarget,
  type Target,
  type TargetKind,
} from './target.ts';

const number =
  (label: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  (value: string) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max)
      throw new InvalidArgumentError(`${label} between ${min} and ${max}`);
    return n;
  };
const rate = number('a rate', 0, 1);

const program = new Command('onceflow')
  .description('Operate an onceflow pipeline: on the local stack (default), LocalStack or AWS.')
  .addOption(
    new Option('--target <target>', 'where the stack runs')
      .choices(['local', 'localstack', 'aws'])
      .default('local'),
  )
  .option('--endpoint <url>', 'endpoint override (LocalStack default http://localhost:4566)')
  .option(
    '--stack-name <name>',
    'CloudFormation stack name (default onceflow-dev; local: the running one)',
  )
  .option('--region <region>', 'AWS region (default from the environment)')
  .option('--local-state <file>', 'the file `npm start -- --keep` wrote', DEFAULT_LOCAL_STATE)
  .option('--verbose', 'print stack traces on errors')
  .showHelpAfterError()
  .addHelpText(
    'after',
    '\nExamples:\n  npx onceflow generate --orders 1000 --hours 24 --seed 7 > orders.ndjson\n  npx onceflow send orders.ndjson && npx onceflow drain\n  npx onceflow --target aws --stack-name onceflow-prod status',
  );

interface GlobalOptions {
  target: TargetKind;
  endpoint?: string;
  stackName?: string;
  region?: string;
  localState: string;
  verbose?: boolean;
}
const globals = () => program.opts<GlobalOptions>();

const target = (): Promise<Target> => {
  const o = globals();
  return resolveTarget({
    target: o.target,
    localState: o.localState,
    ...(o.endpoint ? { endpoint: o.endpoint } : {}),
    ...(o.stackName ? { stackName: o.stackName } : {}),
    ...(o.region ? { region: o.region } : {}),
  });
};

/** A progress bar on stderr when it is a terminal; nothing otherwise (pipes stay clean). */
const progress = (label: string) => {
  if (!process.stderr.isTTY) return { update: (_: number, __: number) => {}, stop: () => {} };
  const bar = new SingleBar({
    format: `${label} |{bar}| {value}/{total}`,
    stream: process.stderr,
    hideCursor: true,
  });
  let started = false;
  return {
    update: (value: number, total: number) => {
      if (!started) bar.start(total, value);
      started = true;
      bar.setTotal(total);
      bar.update(value);
    },
    stop: () => started && bar.stop(),
  };
};

/** An error's stack and every cause under it, for --verbose. */
export const causeChain = (error: unknown): string => {
  const lines: string[] = [];
  for (let e = error, depth = 0; e !== undefined && depth < 10; depth++) {
    const err = e instanceof Error ? e : new Error(String(e));
    lines.push(`${depth === 0 ? '' : 'caused by: '}${err.stack ?? `${err.name}: ${err.message}`}`);
    e = err.cause;
  }
  return lines.join('\n');
};

/** Runs a command body; errors become one line on stderr and exit code 1 (--verbose: the chain). */
const run =
  <A extends unknown[]>(body: (...args: A) => Promise<number | undefined>) =>
  async (...args: A) => {
    try {
      process.exitCode = (await body(...args)) ?? 0;
    } catch (error) {
      const e = error as Error;
      console.error(`onceflow: ${e instanceof CliError ? e.message : `${e.name}: ${e.message}`}`);
      if (globals().verbose) console.error(causeChain(e));
      process.exitCode = 1;
    }
  };

/** `all`, or comma-separated active ISO 4217 codes. */
const currencyList = (text: string): string[] => {
  if (text === 'all') return [...CURRENCIES];
  const codes = text.split(',').map((c) => c.trim().toUpperCase());
  const unknown = codes.filter((c) => currencyExponent(c) === undefined);
  if (unknown.length > 0 || codes.length === 0) {
    throw new InvalidArgumentError(
      `${unknown.join(', ') || text}: not active ISO 4217 codes (give e.g. USD,JPY,KWD or all)`,
    );
  }
  return codes;
};

const json = (value: unknown) => console.log(JSON.stringify(value, null, 2));

program
  .command('send')
  .description('send each line of an NDJSON file as one SQS message body to the orders queue')
  .argument('<file>', 'NDJSON file, one order batch (or any body) per line; - for stdin')
  .option('--rate <n>', 'messages per second at most', number('a rate', 0.1))
  .addHelpText(
    'after',
    '\nExample:\n  npx onceflow send test/fixtures/seed-orders/batches.ndjson --rate 50',
  )
  .action(
    run(async (file: string, options: { rate?: number }) => {
      const text = readFileSync(file === '-' ? 0 : file, 'utf8');
      const lines = text.split('\n').filter((l) => l.trim() !== '');
      const t = await target();
      const bar = progress('sending');
      const { sent, refused } = await sendLines(t, lines, {
        ...(options.rate ? { rate: options.rate } : {}),
        onProgress: bar.update,
      });
      bar.stop();
      console.log(`sent ${sent} messages to ${t.output('OrdersQueueUrl')}`);
      for (const r of refused) console.error(`line ${r.line} was not sent: ${r.reason}`);
      return refused.length > 0 ? 1 : 0;
    }),
  );

program
  .command('generate')
  .description('print a reproducible synthetic order stream as NDJSON')
  .requiredOption('--orders <n>', 'orders', number('a count', 1))
  .option('--hours <n>', 'hours the events span', number('hours', 1), 24)
  .option('--seed <n>', 'random seed', number('a seed', 0), 1)
  .option('--start <hour>', 'first hour (UTC)', '2026-10-01T00:00:00Z')
  .option('--batch-size <n>', 'events per batch', number('a batch size', 1, 500), 50)
  .option('--duplicate-rate <r>', 'share of batches sent twice', rate, 0)
  .option('--late-rate <r>', 'share of events arriving late', rate, 0)
  .option('--invalid-rate <r>', 'share of extra invalid bodies', rate, 0)
  .option(
    '--currencies <codes>',
    'ISO 4217 codes, comma-separated, or "all" (every active code)',
    currencyList,
    ['USD', 'EUR', 'GBP'],
  )
  .addHelpText(
    'after',
    '\nExample:\n  npx onceflow generate --orders 5000 --hours 48 --seed 42 --duplicate-rate 0.2 --currencies USD,JPY,KWD > stream.ndjson',
  )
  .action(
    run(
      async (o: {
        orders: number;
        hours: number;
        seed: number;
        start: string;
        batchSize: number;
        duplicateRate: number;
        lateRate: number;
        invalidRate: number;
        currencies: string[];
      }) => {
        const stream = generateStream({ ...o });
        process.stdout.write(`${stream.lines.join('\n')}\n`);
        const s = stream.stats;
        console.error(
          `${s.batches} batches, ${s.events} events; ${s.duplicates} duplicated, ${s.late} late events, ${s.invalid} invalid bodies`,
        );
        return 0;
      },
    ),
  );

program
  .command('drain')
  .description('wait until both queues are empty with nothing in flight (every dirty hour written)')
  .option('--timeout <seconds>', 'give up after this long', number('seconds', 1), 120)
  .addHelpText('after', '\nExample:\n  npx onceflow drain --timeout 60')
  .action(
    run(async (o: { timeout: number }) => {
      const t = await target();
      const started = Date.now();
      try {
        await drainQueues(
          t.clients.sqs,
          [t.output('OrdersQueueUrl'), t.output('AggregateQueueUrl')],
          { timeoutMs: o.timeout * 1000 },
        );
      } catch (error) {
        throw new CliError(
          `the queues did not drain within ${o.timeout} s (see \`onceflow status\`)`,
          { cause: error },
        );
      }
      console.log(`drained in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return 0;
    }),
  );

program
  .command('orders')
  .description('the newest state of every order')
  .option('--json', 'print JSON: [{orderId, customerId, status, amount, currency, eventTime}]')
  .addHelpText('after', '\nExample:\n  npx onceflow orders --json > orders.json')
  .action(
    run(async (o: { json?: boolean }) => {
      const t = await target();
      const orders = await new DynamoOrderStore(
        t.clients.dynamo,
        t.output('TableName'),
      ).listOrders();
      if (o.json) json(orders);
      else console.log(`${ordersTable(orders)}\n${orders.length} orders`);
      return 0;
    }),
  );

program
  .command('aggregates')
  .description('the hourly aggregates published in S3')
  .option('--from <time>', 'first hour (inclusive)')
  .option('--to <time>', 'end hour (exclusive)')
  .option('--json', 'print JSON sorted by hour')
  .option('--chart', 'draw events per hour')
  .addHelpText(
    'after',
    '\nExample:\n  npx onceflow aggregates --from 2026-10-01 --to 2026-10-02 --chart',
  )
  .action(
    run(async (o: { from?: string; to?: string; json?: boolean; chart?: boolean }) => {
      const interval = parseInterval(o.from, o.to, false);
      const t = await target();
      const hours = (
        await new S3Store(t.clients.s3, t.output('BucketName')).listAggregates()
      ).filter((h) => {
        const ms = Date.parse(h.hour);
        return !interval || (ms >= interval.fromMs && ms < interval.toMs);
      });
      if (o.json) json(hours);
      else if (o.chart) console.log(eventsChart(hours));
      else console.log(`${hourlyTable(hours)}\n${hours.length} hours`);
      return 0;
    }),
  );

program
  .command('rejects')
  .description('the quarantined messages and why')
  .option('--json', 'print JSON, raw bodies included')
  .addHelpText('after', '\nExample:\n  npx onceflow rejects')
  .action(
    run(async (o: { json?: boolean }) => {
      const rejects = await listRejects(await target());
      if (o.json) {
        json(rejects);
        return 0;
      }
      const table = new Table({
        head: ['sent', 'from', 'reason', 'batch', 'message id', 'detail'],
        style: { head: [], border: [], compact: true },
        colWidths: [null, null, null, null, null, 60],
        wordWrap: true,
      });
      for (const r of rejects)
        table.push([r.sentAt, r.source, r.reason, r.batchId ?? '', r.messageId, r.detail]);
      console.log(`${table.toString()}\n${rejects.length} quarantined`);
      return 0;
    }),
  );

const replay = program
  .command('replay')
  .description('send messages again: a DLQ back to its queue, or archived batches');
replay
  .command('dlq')
  .description('move the DLQ messages back to their queue (a message move task) and wait for it')
  .addOption(
    new Option('--queue <queue>', 'which DLQ').choices(['orders', 'aggregate']).default('orders'),
  )
  .addHelpText(
    'after',
    '\nExample:\n  npx onceflow replay dlq --queue orders && npx onceflow drain',
  )
  .action(
    run(async (o: { queue: QueueName }) => {
      const t = await target();
      const bar = progress(`moving ${o.queue} DLQ`);
      const result = await replayDlq(t, o.queue, bar.update);
      bar.stop();
      console.log(
        result.status === 'EMPTY'
          ? `the ${o.queue} DLQ is empty`
          : `moved ${result.moved} messages back to the ${o.queue} queue`,
      );
      return 0;
    }),
  );
replay
  .command('archive')
  .description(
    're-send the archived raw batches of an interval (already applied ones are skipped by the ledger)',
  )
  .requiredOption('--from <time>', 'first hour of the batches’ earliest events (inclusive)')
  .requiredOption('--to <time>', 'end hour (exclusive)')
  .addHelpText(
    'after',
    '\nExample:\n  npx onceflow replay archive --from 2026-10-01 --to 2026-10-02',
  )
  .action(
    run(async (o: { from: string; to: string }) => {
      const interval = parseInterval(o.from, o.to, true);
      if (!interval) return 1;
      const bar = progress('replaying');
      const { batches, refused } = await replayArchive(await target(), interval, bar.update);
      bar.stop();
      console.log(`re-sent ${batches} archived batches`);
      for (const r of refused) console.error(`${r.key} was not sent: ${r.reason}`);
      return refused.length > 0 ? 1 : 0;
    }),
  );

program
  .command('reconcile')
  .description(
    'recompute every hour of [from, to) from DynamoDB and rewrite or delete its S3 object',
  )
  .requiredOption('--from <time>', 'first hour (inclusive)')
  .requiredOption('--to <time>', 'end hour (exclusive)')
  .option(
    '--dry-run',
    'print the plan (write / delete / unchanged per hour) without changing anything',
  )
  .addHelpText(
    'after',
    '\nExample:\n  npx onceflow reconcile --from 2026-10-01 --to 2026-10-02 --dry-run',
  )
  .action(
    run(async (o: { from: string; to: string; dryRun?: boolean }) => {
      const interval = parseInterval(o.from, o.to, true);
      if (!interval) return 1;
      const plans = await reconcile(await target(), interval, o.dryRun ?? false);
      const table = new Table({
        head: ['hour', o.dryRun ? 'plan' : 'done', 'events', 'revision (S3 → DynamoDB)'],
        style: { head: [], border: [], compact: true },
      });
      for (const p of plans)
        table.push([
          p.hour,
          p.action,
          String(p.events),
          `${p.storedRevision ?? '—'} → ${p.action === 'delete' ? '—' : p.revision}`,
        ]);
      console.log(table.toString());
      const count = (a: string) => plans.filter((p) => p.action === a).length;
      console.log(
        `${o.dryRun ? 'would write' : 'wrote'} ${count('write')}, ${o.dryRun ? 'would delete' : 'deleted'} ${count('delete')}, unchanged ${count('unchanged')}`,
      );
      return 0;
    }),
  );

program
  .command('verify')
  .description('check every S3 hour object against DynamoDB; exit 1 on any difference')
  .option('--from <time>', 'first hour (inclusive)')
  .option('--to <time>', 'end hour (exclusive)')
  .addHelpText('after', '\nExample:\n  npx onceflow verify --from 2026-10-01 --to 2026-10-02')
  .action(
    run(async (o: { from?: string; to?: string }) => {
      const { checked, differences } = await verify(
        await target(),
        parseInterval(o.from, o.to, false),
      );
      for (const d of differences) console.log(`${d.hour}  ${d.problem}: ${d.detail}`);
      console.log(`${checked} hours checked, ${differences.length} differences`);
      return differences.length === 0 ? 0 : 1;
    }),
  );

program
  .command('status')
  .description('queue depths, in-flight and DLQ counts, ledger totals')
  .option('--json', 'print JSON')
  .addHelpText('after', '\nExample:\n  npx onceflow status')
  .action(
    run(async (o: { json?: boolean }) => {
      const t = await target();
      const s = await status(t, join(dirname(globals().localState), 'logs'));
      if (o.json) {
        json(s);
        return 0;
      }
      const queues = new Table({
        head: ['queue', 'visible', 'in flight', 'delayed'],
        style: { head: [], border: [], compact: true },
      });
      for (const q of s.queues)
        queues.push([q.name, String(q.visible), String(q.inFlight), String(q.delayed)]);
      console.log(
        `${t.stackName} (${t.kind}${t.endpoint ? ` at ${t.endpoint}` : ''})\n${queues.toString()}`,
      );
      const rejected = Object.values(s.rejects).reduce((a, b) => a + b, 0);
      console.log(
        `ledger: ${s.ledger.applied} batches applied, ${s.ledger.pending} pending; duplicates recognised: ${s.duplicates ?? 'unknown'}; ` +
          `conflicts: ${s.rejects['batch-conflict'] ?? 0}; rejects: ${rejected}` +
          (rejected
            ? ` (${Object.entries(s.rejects)
                .map(([r, n]) => `${r} ${n}`)
                .join(', ')})`
            : ''),
      );
      return 0;
    }),
  );

program
  .command('chaos')
  .description(
    'randomized fault schedules that check exactly-once against a reference model (embedded emulators)',
  )
  .option('--schedules <n>', 'schedules to run', number('a count', 1), 100)
  .option(
    '--seed <n>',
    'run seed (each schedule gets its own seed from it)',
    number('a seed', 0),
    1,
  )
  .option('--schedule-seed <n>', 'rerun one schedule by its seed', number('a seed', 0))
  .option('--orders <n>', 'orders per schedule', number('a count', 1), 12)
  .option('--json', 'print the summary as JSON')
  .option(
    '--assembly <dir>',
    'a synthesized cloud assembly (default: cdk.out, synthesized when stale)',
  )
  .addHelpText(
    'after',
    '\nExample:\n  npx onceflow chaos --schedules 500 --seed 7\n  npx onceflow chaos --schedule-seed 1063355',
  )
  .action(
    run(
      async (o: {
        schedules: number;
        seed: number;
        scheduleSeed?: number;
        orders: number;
        json?: boolean;
        assembly?: string;
      }) => {
        process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
        process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
        // Every schedule runs on a copy of the synthesized stack, as deployed.
        const assemblyDir = o.assembly ?? (await projectAssembly());
        const emulators = await startEmulators();
        try {
          let summary: ChaosSummary;
          if (o.scheduleSeed !== undefined) {
            summary = summaryOf(
              await runSchedule({
                endpoint: emulators.endpoint,
                assemblyDir,
                seed: o.scheduleSeed,
                orders: o.orders,
              }),
            );
          } else {
            const bar = progress('schedules');
            summary = await runChaos({
              endpoint: emulators.endpoint,
              assemblyDir,
              schedules: o.schedules,
              seed: o.seed,
              orders: o.orders,
              onSchedule: (r, i) => {
                if (r.diff) console.log(`schedule seed ${r.seed}: ${r.diff}`);
                bar.update(i + 1, o.schedules);
              },
            });
            bar.stop();
          }
          if (o.json) json(summary);
          else console.log(formatSummary(summary));
          const uncovered =
            o.scheduleSeed === undefined && summary.crashPoints.covered < summary.crashPoints.total;
          return summary.mismatches > 0 || uncovered ? 1 : 0;
        } finally {
          await emulators.stop();
        }
      },
    ),
  );

program
  .command('local')
  .description('the local stack')
  .command('up')
  .description('run the stack locally until Ctrl-C (same as `npm start -- --keep --no-demo`)')
  .option('--port <port>', 'edge port, taken when free', '4566')
  .option('--demo', 'run the demo first')
  .addHelpText('after', '\nExample:\n  npx onceflow local up')
  .action(
    run(
      (o: { port: string; demo?: boolean }) =>
        new Promise<number>((resolve) => {
          const args = [
            join(import.meta.dirname, '..', 'local', 'start.ts'),
            '--keep',
            '--port',
            o.port,
            '--state',
            globals().localState,
          ];
          if (!o.demo) args.push('--no-demo');
          const child = spawn(process.execPath, args, { stdio: 'inherit' });
          for (const signal of ['SIGINT', 'SIGTERM'] as const)
            process.on(signal, () => child.kill(signal));
          child.once('exit', (code) => resolve(code ?? 1));
        }),
    ),
  );

await program.parseAsync();
