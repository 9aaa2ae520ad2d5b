/** `onceflow chaos`: randomized fault schedules on embedded emulators (the engine is harness/chaos.ts). */
import type { Command } from 'commander';
import type { ChaosSummary } from '../../harness/chaos.ts';
import { json, number, progress, run } from '../program.ts';

/**
 * The engine, the emulators and the synthesizer, loaded when the command runs: the engine (the
 * functions' own code, the reference model, fast-check) took 250 ms of every other command's
 * start, which loads this file to register the command.
 */
const engine = async () => {
  const [chaos, emulators, synth] = await Promise.all([
    import('../../harness/chaos.ts'),
    import('../../local/emulators.ts'),
    import('../../local/synth.ts'),
  ]);
  return { ...chaos, ...emulators, ...synth };
};

export const register = (program: Command): void => {
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
    .option('--concurrency <n>', 'schedules run at once', number('a count', 1), 2)
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
          concurrency: number;
          json?: boolean;
          assembly?: string;
        }) => {
          const {
            exitOf,
            formatSummary,
            projectAssembly,
            runChaos,
            runSchedule,
            startEmulators,
            summaryOf,
          } = await engine();
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
              let ended = 0;
              summary = await runChaos({
                endpoint: emulators.endpoint,
                assemblyDir,
                schedules: o.schedules,
                seed: o.seed,
                orders: o.orders,
                concurrency: o.concurrency,
                onSchedule: (r) => {
                  if (r.diff) console.log(`schedule seed ${r.seed}: ${r.diff}`);
                  bar.update(++ended, o.schedules);
                },
              });
              bar.stop();
            }
            if (o.json) json(summary);
            else console.log(formatSummary(summary));
            const { code, why } = exitOf(summary, o.scheduleSeed !== undefined);
            // The run still failed its proof: say why, or a clean summary exits 1 unexplained.
            if (why) console.error(why);
            return code;
          } finally {
            await emulators.stop();
          }
        },
      ),
    );
};
