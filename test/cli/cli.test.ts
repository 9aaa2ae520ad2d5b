/** The CLI's commands that bring their own stack or need none: generate, local up, errors, help. */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import * as v from 'valibot';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { COMMAND_NAMES, fullCli } from '../../cli/main.ts';
import { LOCAL_CREDENTIALS, startEmulators } from '../../local/emulators.ts';
import { waitFor } from '../../local/net.ts';
import { runProcess } from '../../local/process.ts';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { readLocalState } from '../../local/state.ts';
import { onceflow, ROOT, recordState as recordStateIn, spawnOnceflow } from '../support/cli.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { parseJson } from '../support/json.ts';
import { uniqueName } from '../support/pipeline.ts';

const assembly = inject('assembly');
const cli = await fullCli();
const dir = mkdtempSync(join(tmpdir(), 'onceflow-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const recordState = (runtime: LocalRuntime) => recordStateIn(runtime, dir);

describe('onceflow generate', () => {
  const generate = (seed: string) =>
    onceflow([
      'generate',
      '--orders',
      '200',
      '--hours',
      '6',
      '--seed',
      seed,
      '--duplicate-rate',
      '0.3',
      '--late-rate',
      '0.1',
      '--invalid-rate',
      '0.2',
      '--batch-size',
      '20',
    ]);

  it('prints the same stream for the same seed and another for another seed', async () => {
    const [a, b, c] = await Promise.all([generate('3'), generate('3'), generate('4')]);
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    expect(a.stdout).not.toBe(c.stdout);
    const lines = a.stdout.trim().split('\n');
    const ids = lines.flatMap((l) => {
      try {
        return [parseJson(v.object({ batchId: v.optional(v.string()) }), l).batchId ?? ''];
      } catch {
        return ['(invalid)'];
      }
    });
    expect(
      new Set(ids.filter((id) => id.includes('-bad-') || id === '(invalid)' || id === '')).size,
    ).toBeGreaterThan(0);
    expect(ids.length).toBeGreaterThan(new Set(ids).size); // duplicates
    expect(a.stderr).toMatch(
      /\d+ batches, \d+ events; \d+ duplicated, \d+ late events, \d+ invalid bodies/,
    );
  });

  it('takes a date or a whole hour for --start, spelled any way, and names anything else', async () => {
    const startingAt = (start: string) => onceflow(['generate', '--orders', '5', '--start', start]);
    const [date, hour, half, nonsense] = await Promise.all([
      startingAt('2026-10-02'),
      startingAt('2026-10-02T00:00:00.000Z'),
      startingAt('2026-10-02T00:30:00Z'),
      startingAt('nonsense'),
    ]);
    expect(date.code).toBe(0);
    expect(hour.stdout).toBe(date.stdout);
    expect(date.stdout).toContain('"eventTime":"2026-10-02T');
    for (const refused of [half, nonsense]) {
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(
        /^onceflow: --start .+: give a date \(2026-10-01\) or a whole UTC hour/,
      );
      expect(refused.stdout).toBe('');
    }
  });
});

describe('onceflow validate', () => {
  it('says with no stack which lines would be quarantined and why, which repeat one before, and exits 1 only for those quarantined', async () => {
    const seed = join(ROOT, 'test', 'fixtures', 'seed-orders', 'batches.ndjson');
    const clean = await onceflow(['validate', seed]);
    expect([clean.code, clean.stdout]).toEqual([0, '4 bodies: 4 apply (9 events over 4 hours)\n']);

    const [first = '', second = ''] = readFileSync(seed, 'utf8').split('\n');
    const file = join(dir, 'to-validate.ndjson');
    writeFileSync(
      file,
      [
        first,
        '',
        first,
        first.replace('"25.50"', '"26.50"'),
        second,
        second.replace('make-orders-2', 'make-orders-2b'),
        '{"batchId": "b-x", "events": []}',
        // Not JSON, with an escape sequence that JSON.parse's message quotes.
        '{"batchId": x\u001b[2J}',
      ].join('\n'),
    );
    const r = await onceflow(['validate', file]);
    expect(r.code).toBe(1);
    const rows = r.stdout.split('\n').filter((l) => /^│ +\d/.test(l));
    expect(
      rows.map((l) =>
        l
          .split('│')
          .map((c) => c.trim())
          .slice(1, 3),
      ),
    ).toEqual([
      ['3', 'make-orders-1'],
      ['4', 'make-orders-1'],
      ['6', 'make-orders-2b'],
      ['7', 'b-x'],
      ['8', ''],
    ]);
    expect(r.stdout).toContain('the same batch as line 1: applied once');
    expect(r.stdout).toContain('batch-conflict: the id of line 1 with other content');
    expect(r.stdout).toContain('an earlier line carries: counted once');
    expect(r.stdout).toContain('quarantined (invalid-json)');
    // Untrusted text is escaped, never sent to the terminal as is.
    expect(r.stdout).not.toContain('\u001b');
    expect(r.stdout).toContain('\\u{001b}[2J');
    expect(r.stdout.trim().split('\n').at(-1)).toBe(
      '7 bodies: 3 apply (5 events over 2 hours), 1 repeat an earlier line, 2 quarantined (schema-violation 1, invalid-json 1), 1 batch conflict',
    );

    // From stdin, as JSON: every line's verdict, named by its line in the file.
    const piped = spawnOnceflow(['validate', '-', '--json']);
    let stdout = '';
    piped.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    piped.stderr.resume();
    piped.stdin.end(readFileSync(file));
    expect(await new Promise((resolve) => piped.once('close', resolve))).toBe(1);
    const verdicts = parseJson(
      v.array(v.object({ line: v.number(), verdict: v.object({ kind: v.string() }) })),
      stdout,
    );
    expect(verdicts.map((l) => [l.line, l.verdict.kind])).toEqual([
      [1, 'applies'],
      [3, 'repeat'],
      [4, 'batch-conflict'],
      [5, 'applies'],
      [6, 'applies'],
      [7, 'refused'],
      [8, 'refused'],
    ]);
  });
});

describe('onceflow local up', () => {
  it('runs the stack until interrupted, writing the state the other commands read, and prints its endpoint for scripts', async () => {
    const state = join(mkdtempSync(join(dir, 'up-')), 'local.json');
    const child = spawnOnceflow(['--local-state', state, 'local', 'up', '--port', '0', '--watch']);
    let printed = '';
    child.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
    });
    child.stderr.resume();
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      await waitFor(async () => existsSync(state), {
        timeoutMs: DEADLINE_MS,
        what: 'the local state file',
      });
      const status = await onceflow(['--local-state', state, 'status', '--json']);
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ ledger: { applied: 0, pending: 0 } });
      const recorded = readLocalState(state);
      if (!recorded.ok) throw new Error(recorded.problem);
      const endpoint = await onceflow(['--local-state', state, 'local', 'endpoint']);
      expect(endpoint.stdout).toBe(`${recorded.state.endpoint}\n`);
      const env = await onceflow(['--local-state', state, 'local', 'endpoint', '--env']);
      expect(env.stdout.split('\n')).toEqual([
        `export AWS_ENDPOINT_URL='${recorded.state.endpoint}'`,
        "export AWS_REGION='us-east-1'",
        "export AWS_DEFAULT_REGION='us-east-1'",
        `export AWS_ACCESS_KEY_ID='${LOCAL_CREDENTIALS.accessKeyId}'`,
        `export AWS_SECRET_ACCESS_KEY='${LOCAL_CREDENTIALS.secretAccessKey}'`,
        '',
      ]);
      // --watch reaches npm start, which says what it watches once the stack runs.
      await waitFor(() => printed.includes('Watching infra, functions, shared, adapters'), {
        timeoutMs: DEADLINE_MS,
        what: 'the watcher to start',
      });
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });
});

describe('onceflow errors and help', () => {
  it('reports in one line that DynamoDB Local died under the edge, naming it', async () => {
    const failures: string[] = [];
    const own = await startEmulators({ onFailure: (message) => failures.push(message) });
    try {
      const runtime = await startLocalRuntime({
        assemblyDir: assembly.assemblyDir,
        stackName: assembly.stackName,
        localStackName: uniqueName('dead'),
        emulators: own,
      });
      const state = recordState(runtime);
      process.kill(own.dynamoLocal.pid, 'SIGKILL');
      await waitFor(() => failures.length > 0, {
        timeoutMs: DEADLINE_MS,
        what: 'the runtime to notice',
      });
      expect(failures).toEqual([
        `DynamoDB Local (pid ${own.dynamoLocal.pid}) was killed (SIGKILL)`,
      ]);
      const status = await onceflow(['--local-state', state, 'status']);
      expect(status.code).toBe(1);
      expect(status.stderr).toMatch(
        new RegExp(
          `^onceflow: .*the onceflow local edge could not reach DynamoDB Local \\(pid ${own.dynamoLocal.pid}\\)`,
        ),
      );
      expect(status.stderr.trim().split('\n')).toHaveLength(1);
      await runtime.stop();
    } finally {
      await own.stop();
    }
  });

  it('says clearly that no local stack runs, without a stack trace', async () => {
    const r = await onceflow(['--local-state', join(dir, 'missing.json'), 'status']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^onceflow: no running local stack .*npm start -- --keep/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('names a file send cannot read and why, before looking for a stack', async () => {
    const missing = join(dir, 'no-such.ndjson');
    const [absent, directory] = await Promise.all([
      onceflow(['--local-state', join(dir, 'missing.json'), 'send', missing]),
      onceflow(['--local-state', join(dir, 'missing.json'), 'send', dir]),
    ]);
    expect([absent.code, directory.code]).toEqual([1, 1]);
    expect(absent.stderr).toBe(`onceflow: cannot read ${missing}: no such file\n`);
    expect(directory.stderr).toBe(`onceflow: cannot read ${dir}: it is a directory\n`);
  });

  it('names each batch, order or customer id the contract bans, cut and escaped, before looking for a stack', async () => {
    const long = 'y'.repeat(3000);
    const r = await onceflow([
      '--local-state',
      join(dir, 'missing.json'),
      'batch',
      'fine-1',
      '',
      long,
      'a\u001b[31mb',
    ]);
    expect(r.code).toBe(1);
    const rule = 'is no batch id: it must be 1-128 characters of A-Z a-z 0-9 . _ : / -';
    expect(r.stderr.split('\n')).toEqual([
      `onceflow: an empty id ${rule}`,
      `onceflow: ${'y'.repeat(128)}… (3000 characters) ${rule}`,
      `onceflow: a\\u{001b}[31mb ${rule}`,
      '',
    ]);
    expect(r.stdout).toBe('');

    const missing = join(dir, 'missing.json');
    const [order, customer] = await Promise.all([
      onceflow(['--local-state', missing, 'orders', '--order-id', 'o\u0001']),
      onceflow(['--local-state', missing, 'orders', '--customer', 'c'.repeat(129)]),
    ]);
    expect([order.code, customer.code]).toEqual([1, 1]);
    expect(order.stderr).toBe(
      'onceflow: o\\u{0001} is no order id: it must not contain control characters\n',
    );
    expect(customer.stderr).toBe(
      `onceflow: ${'c'.repeat(128)}… (129 characters) is no customer id: it must be at most 128 characters\n`,
    );
  });

  it('loads the module of the command it runs and none of the others, and all of them for the help', async () => {
    /** Every module a run loaded, as URLs. */
    const loaded = async (args: readonly string[]) => {
      const r = await runProcess(
        join(ROOT, 'node_modules', '.bin', 'node'),
        [
          '--import',
          join(ROOT, 'test/fixtures/module-loads/record.mjs'),
          'cli/onceflow.mjs',
          ...args,
        ],
        { cwd: ROOT },
      );
      expect(r.code, r.stderr).toBe(0);
      return parseJson(v.array(v.string()), r.stderr.trim().split('\n').at(-1) ?? '[]');
    };
    // The commands' own modules (not the helpers beside them, such as interval.ts).
    const commandModules = (urls: readonly string[]) =>
      urls
        .filter((url) => url.includes('/cli/commands/'))
        .map((url) => url.slice(url.lastIndexOf('/') + 1))
        .filter((file) => modules.has(file))
        .sort();
    const loads = async (args: readonly string[]) => commandModules(await loaded(args));
    // The modules that register commands, read from the folder (not from the CLI's own list).
    const folder = join(ROOT, 'cli', 'commands');
    const modules = new Set(
      readdirSync(folder).filter((file) =>
        readFileSync(join(folder, file), 'utf8').includes('export const register'),
      ),
    );
    // Every top-level command is known by name, or running it would load them all.
    expect([...COMMAND_NAMES].sort()).toEqual(cli.commands.map((c) => c.name()).sort());
    // A command registered by another command's module (which may import a third's helpers).
    const resume = await loads(['resume', '--help']);
    expect(resume).toContain('trigger.ts');
    expect(resume).not.toContain('check.ts');
    const generate = await loaded(['generate', '--orders', '1']);
    expect(commandModules(generate)).toEqual(['generate.ts']);
    // A command that needs no stack loads no AWS client, not even through a helper it imports.
    expect(generate.filter((url) => /node_modules\/(@aws-sdk|@smithy)\//.test(url))).toEqual([]);
    // Nor does validate, which checks bodies with the product's own schema.
    const validate = await loaded([
      'validate',
      join(ROOT, 'test/fixtures/seed-orders/batches.ndjson'),
    ]);
    expect(commandModules(validate)).toEqual(['validate.ts']);
    expect(validate.filter((url) => /node_modules\/(@aws-sdk|@smithy)\//.test(url))).toEqual([]);
    // A global option before the command, and a subcommand named like another command.
    const replay = await loads(['--stack-name', 'x', 'replay', 'rejects', '--help']);
    expect(replay).toEqual(expect.arrayContaining(['rejects.ts', 'replay.ts']));
    expect(replay).not.toContain('check.ts');
    expect(await loads(['--help'])).toEqual([...modules].sort());
  });

  it('prints an example in the help of every command', async () => {
    // Every command the CLI registers, however deep: one added without an example fails here.
    const leaves = (command: Command): Command[] =>
      command.commands.length === 0 ? [command] : command.commands.flatMap(leaves);
    const commands = leaves(cli);
    expect(commands.length).toBeGreaterThanOrEqual(19);
    for (const command of commands) {
      let help = '';
      command.configureOutput({ writeOut: (text) => (help += text) });
      command.outputHelp();
      expect(help, command.name()).toMatch(/Examples?:\n\s+.*npx onceflow /);
    }
    // And as a process: the top-level help lists them.
    const r = await onceflow(['--help']);
    expect(r.code).toBe(0);
    for (const command of cli.commands) expect(r.stdout).toContain(command.name());
  });
});
