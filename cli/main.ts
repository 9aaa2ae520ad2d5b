/**
 * `onceflow`: the operator CLI. Sends, generates, drains, inspects, replays and reconciles, on
 * the local stack, LocalStack or AWS. Each command lives in `commands/` (what it does and how it
 * is called); this file assembles them, and `onceflow.mjs` runs them.
 */
import type { Command } from 'commander';
import { program } from './program.ts';

interface CommandModule {
  register(program: Command): void;
}

/**
 * Each module of `commands/` and the top-level commands it registers, loaded on demand: a run
 * loads the module of the command it names (and what that module imports), not all of them.
 * Listed in the order the help prints them.
 */
const MODULES: readonly {
  readonly commands: readonly string[];
  load(): Promise<CommandModule>;
}[] = [
  { commands: ['aggregates'], load: () => import('./commands/aggregates.ts') },
  { commands: ['alarms'], load: () => import('./commands/alarms.ts') },
  { commands: ['batch'], load: () => import('./commands/batch.ts') },
  { commands: ['chaos'], load: () => import('./commands/chaos.ts') },
  { commands: ['check'], load: () => import('./commands/check.ts') },
  { commands: ['drain'], load: () => import('./commands/drain.ts') },
  { commands: ['drill'], load: () => import('./commands/drill.ts') },
  { commands: ['generate'], load: () => import('./commands/generate.ts') },
  { commands: ['hours'], load: () => import('./commands/hours.ts') },
  { commands: ['invoke'], load: () => import('./commands/invoke.ts') },
  { commands: ['local'], load: () => import('./commands/local.ts') },
  { commands: ['logs'], load: () => import('./commands/logs.ts') },
  { commands: ['orders'], load: () => import('./commands/orders.ts') },
  { commands: ['reconcile', 'verify'], load: () => import('./commands/reconcile.ts') },
  { commands: ['rejects'], load: () => import('./commands/rejects.ts') },
  { commands: ['replay'], load: () => import('./commands/replay.ts') },
  { commands: ['scale'], load: () => import('./commands/scale.ts') },
  { commands: ['send'], load: () => import('./commands/send.ts') },
  { commands: ['status'], load: () => import('./commands/status.ts') },
  { commands: ['table'], load: () => import('./commands/table.ts') },
  { commands: ['pause', 'resume'], load: () => import('./commands/trigger.ts') },
  { commands: ['validate'], load: () => import('./commands/validate.ts') },
];

/** Every top-level command's name (what the test that none is missing reads). */
export const COMMAND_NAMES: readonly string[] = MODULES.flatMap((m) => m.commands);

const loaded = new Set<(typeof MODULES)[number]>();

const register = async (
  wanted: (module: (typeof MODULES)[number]) => boolean,
): Promise<Command> => {
  for (const module of MODULES) {
    if (!wanted(module) || loaded.has(module)) continue;
    loaded.add(module);
    (await module.load()).register(program);
  }
  return program;
};

/** The CLI with every command registered (the top-level help, and the tests that walk them). */
export const fullCli = (): Promise<Command> => register(() => true);

/**
 * The CLI for one run: the modules of the commands `args` names, or all of them when it names
 * none (`--help`, `help`, a mistyped name, which commander answers with the closest ones). A
 * global option's value or a subcommand that happens to be a command's name only loads one
 * module more: the command the run names is always among them.
 */
export const cliFor = (args: readonly string[]): Promise<Command> => {
  const named = COMMAND_NAMES.filter((name) => args.includes(name));
  if (named.length === 0 || args.includes('help')) return fullCli();
  return register((module) => module.commands.some((name) => named.includes(name)));
};
