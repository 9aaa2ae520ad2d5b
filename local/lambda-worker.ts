/**
 * One Lambda execution environment: a worker thread with its own environment variables that
 * loads the bundled handler once (the cold start) and runs one invocation at a time.
 */
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { lambdaContext } from './lambda-context.ts';

interface WorkerData {
  readonly handlerFile: string;
  readonly handlerExport: string;
  readonly functionName: string;
  readonly memoryMb: number;
}

interface Invoke {
  readonly id: number;
  readonly event: unknown;
  readonly timeoutMs: number;
  readonly requestId: string;
}

const data = workerData as WorkerData;
const port = parentPort;
if (!port) throw new Error('lambda-worker runs as a worker thread');

/**
 * Resolves once this thread's output so far has reached the parent: a worker's stdout and stderr
 * cross to it apart from its messages, and a write's callback runs only when the parent has
 * taken the chunks before it. Answered after this, an invocation's log is complete before its
 * END line.
 */
const flushed = () =>
  Promise.all(
    [process.stdout, process.stderr].map(
      (stream) => new Promise<void>((resolve) => stream.write('', () => resolve())),
    ),
  );

const describe = (error: unknown) =>
  error instanceof Error
    ? { errorType: error.name, errorMessage: error.message, stack: error.stack ?? '' }
    : { errorType: 'Error', errorMessage: String(error), stack: '' };

try {
  const module = (await import(pathToFileURL(data.handlerFile).href)) as Record<string, unknown>;
  const handler = module[data.handlerExport];
  if (typeof handler !== 'function')
    throw new TypeError(`${data.handlerFile} does not export ${data.handlerExport}`);
  port.postMessage({ type: 'ready' });
  port.on('message', async ({ id, event, timeoutMs, requestId }: Invoke) => {
    try {
      const value: unknown = await handler(
        event,
        lambdaContext(data.functionName, timeoutMs, data.memoryMb, {
          awsRequestId: requestId,
          // As Lambda's context names them: the environment's own log group and stream.
          logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME,
          logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME,
          region: process.env.AWS_REGION,
        }),
      );
      await flushed();
      // The response crosses the wire as JSON, as it does from Lambda.
      port.postMessage({ type: 'result', id, ok: true, json: JSON.stringify(value) ?? 'null' });
    } catch (error) {
      await flushed();
      port.postMessage({ type: 'result', id, ok: false, error: describe(error) });
    }
  });
} catch (error) {
  port.postMessage({ type: 'init-error', error: describe(error) });
}
