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
const MODULES: readonly { readonly file: string; readonly commands: readonly string[] }[] = [
  { file: 'aggregates.ts', commands: ['aggregates'] },
  { file: 'alarms.ts', commands: ['alarms'] },
  { file: 'batch.ts', commands: ['batch'] },
  { file: 'chaos.ts', commands: ['chaos'] },
  { file: 'check.ts', commands: ['check'] },
  { file: 'drain.ts', commands: ['drain'] },
  { file: 'drill.ts', commands: ['drill'] },
  { file: 'generate.ts', commands: ['generate'] },
  { file: 'hours.ts', commands: ['hours'] },
  { file: 'invoke.ts', commands: ['invoke'] },
  { file: 'local.ts', commands: ['local'] },
  { file: 'logs.ts', commands: ['logs'] },
  { file: 'orders.ts', commands: ['orders'] },
  { file: 'reconcile.ts', commands: ['reconcile', 'verify'] },
  { file: 'rejects.ts', commands: ['rejects'] },
  { file: 'replay.ts', commands: ['replay'] },
  { file: 'scale.ts', commands: ['scale'] },
  { file: 'send.ts', commands: ['send'] },
  { file: 'status.ts', commands: ['status'] },
  { file: 'table.ts', commands: ['table'] },
  { file: 'trigger.ts', commands: ['pause', 'resume'] },
];

/** Every top-level command's name, and the modules (what the test that none is missing reads). */
export const COMMAND_NAMES: readonly string[] = MODULES.flatMap((m) => m.commands);
export const COMMAND_MODULES: readonly string[] = MODULES.map((m) => m.file);

const loaded = new Set<(typeof MODULES)[number]>();

const register = async (
  wanted: (module: (typeof MODULES)[number]) => boolean,
): Promise<Command> => {
  for (const module of MODULES) {
    if (!wanted(module) || loaded.has(module)) continue;
    loaded.add(module);
    const { register }: CommandModule = await import(`./commands/${module.file}`);
    register(program);
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
