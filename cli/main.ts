/**
 * `onceflow`: the operator CLI. Sends, generates, drains, inspects, replays and reconciles, on
 * the local stack, LocalStack or AWS. Each command lives in `commands/` (what it does and how it
 * is called); this file assembles them, and `onceflow.mjs` runs them.
 */
import { register as aggregatesCommand } from './commands/aggregates.ts';
import { register as alarmsCommand } from './commands/alarms.ts';
import { register as batchCommand } from './commands/batch.ts';
import { register as chaosCommand } from './commands/chaos.ts';
import { register as checkCommand } from './commands/check.ts';
import { register as drainCommand } from './commands/drain.ts';
import { register as drillCommand } from './commands/drill.ts';
import { register as generateCommand } from './commands/generate.ts';
import { register as hoursCommand } from './commands/hours.ts';
import { register as invokeCommand } from './commands/invoke.ts';
import { register as localCommand } from './commands/local.ts';
import { register as logsCommand } from './commands/logs.ts';
import { register as ordersCommand } from './commands/orders.ts';
import { register as reconcileCommand } from './commands/reconcile.ts';
import { register as rejectsCommand } from './commands/rejects.ts';
import { register as replayCommand } from './commands/replay.ts';
import { register as scaleCommand } from './commands/scale.ts';
import { register as sendCommand } from './commands/send.ts';
import { register as statusCommand } from './commands/status.ts';
import { register as tableCommand } from './commands/table.ts';
import { register as triggerCommand } from './commands/trigger.ts';
import { program } from './program.ts';

/** The CLI with every command registered (what the tests walk to check each command's help). */
export const cli = program;

for (const register of [
  aggregatesCommand,
  alarmsCommand,
  batchCommand,
  chaosCommand,
  checkCommand,
  drainCommand,
  drillCommand,
  generateCommand,
  hoursCommand,
  invokeCommand,
  localCommand,
  logsCommand,
  ordersCommand,
  reconcileCommand,
  rejectsCommand,
  replayCommand,
  scaleCommand,
  sendCommand,
  statusCommand,
  tableCommand,
  triggerCommand,
])
  register(program);
