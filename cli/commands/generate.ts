/** `onceflow generate`: a reproducible synthetic stream (the generator is harness/generate.ts). */
import { type Command, Option } from 'commander';
import { generateStream } from '../../harness/generate.ts';
import { currencyList, number, rate, run } from '../program.ts';
import { parseBoundary } from './interval.ts';

export const register = (program: Command): void => {
  program
    .command('generate')
    .description('print a reproducible synthetic order stream as NDJSON')
    .requiredOption('--orders <n>', 'orders', number('a count', 1))
    .option('--hours <n>', 'hours the events span', number('hours', 1), 24)
    .option('--seed <n>', 'random seed', number('a seed', 0), 1)
    .option('--start <hour>', 'first hour: a date or a whole UTC hour', '2026-10-01T00:00:00Z')
    .option('--batch-size <n>', 'events per batch', number('a batch size', 1, 500), 50)
    .option('--duplicate-rate <r>', 'share of batches sent twice', rate, 0)
    .option('--late-rate <r>', 'share of events arriving late', rate, 0)
    .option('--invalid-rate <r>', 'share of extra invalid bodies', rate, 0)
    .addOption(
      new Option(
        '--currencies <codes>',
        'ISO 4217 codes, comma-separated, or "all" (every active code)',
      )
        .argParser(currencyList)
        .default(['USD', 'EUR', 'GBP'], 'USD,EUR,GBP'),
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
          // One spelling per hour: the start is part of what tags the stream's ids.
          const start = new Date(parseBoundary('--start', o.start)).toISOString();
          const stream = generateStream({ ...o, start: start.replace('.000Z', 'Z') });
          process.stdout.write(`${stream.lines.join('\n')}\n`);
          const s = stream.stats;
          console.error(
            `${s.batches} batches, ${s.events} events; ${s.duplicates} duplicated, ${s.late} late events, ${s.invalid} invalid bodies`,
          );
          return 0;
        },
      ),
    );
};
