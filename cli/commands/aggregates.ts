/** `onceflow aggregates`: the hourly objects published in S3, as a table, JSON or a chart. */
import type { Command } from 'commander';
import { S3Store } from '../../adapters/s3.ts';
import { counted, eventsChart, hourlyTable } from '../../local/render.ts';
import { json, run, target } from '../program.ts';
import { parseInterval } from './interval.ts';

export const register = (program: Command): void => {
  program
    .command('aggregates')
    .description('the hourly aggregates published in S3')
    .option('--from <time>', 'first hour (inclusive)')
    .option('--to <time>', 'end hour (exclusive)')
    .option('--json', 'print JSON sorted by hour')
    .option('--chart', 'draw events per hour')
    .option('--final-only', 'only hours that are final (amended ones included)')
    .addHelpText(
      'after',
      '\nExample:\n  npx onceflow aggregates --from 2026-10-01 --to 2026-10-02 --chart',
    )
    .action(
      run(
        async (o: {
          from?: string;
          to?: string;
          json?: boolean;
          chart?: boolean;
          finalOnly?: boolean;
        }) => {
          const interval = parseInterval(o.from, o.to, false);
          const t = await target();
          const hours = (await new S3Store(t.clients.s3, t.output('BucketName')).listHourObjects())
            .filter(({ aggregate: h, lifecycle }) => {
              const ms = Date.parse(h.hour);
              const inside = !interval || (ms >= interval.fromMs && ms < interval.toMs);
              return inside && (!o.finalOnly || lifecycle.final === true);
            })
            .map((stored) => stored.aggregate);
          if (o.json) json(hours);
          else if (o.chart) console.log(eventsChart(hours));
          else console.log(`${hourlyTable(hours)}\n${counted(hours.length, 'hour')}`);
          return 0;
        },
      ),
    );
};
