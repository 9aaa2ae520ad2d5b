/**
 * The local-state file that `npm start -- --keep` writes and the CLI reads: one schema for the
 * writer and the reader.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as v from 'valibot';

export const DEFAULT_LOCAL_STATE = join(import.meta.dirname, '..', '.onceflow', 'local.json');

export const LocalStateSchema = v.object({
  endpoint: v.string(),
  region: v.string(),
  stackName: v.string(),
  outputs: v.record(v.string(), v.string()),
  credentials: v.object({ accessKeyId: v.string(), secretAccessKey: v.string() }),
  pid: v.number(),
  startedAt: v.string(),
  /**
   * How old the edge's eventually consistent reads may get (`--read-lag`), for commands that must
   * wait them out; absent in a file written before it was recorded: the default lag.
   */
  readLagMs: v.optional(v.number()),
});

export type LocalState = v.InferOutput<typeof LocalStateSchema>;

export const writeLocalState = (file: string, state: LocalState): void => {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(v.parse(LocalStateSchema, state), null, 2)}\n`);
};

/** The state in `file`, or why it is not one (unreadable JSON or another shape). */
export const readLocalState = (
  file: string,
): { ok: true; state: LocalState } | { ok: false; problem: string } => {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
  const result = v.safeParse(LocalStateSchema, json);
  return result.success
    ? { ok: true, state: result.output }
    : { ok: false, problem: result.issues.map((i) => i.message).join('; ') };
};
