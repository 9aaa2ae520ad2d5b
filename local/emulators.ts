/**
 * The embedded AWS emulators behind one edge endpoint: DynamoDB Local (Java) and fauxqs
 * (in-process SQS and S3), with a small gap-filler for what fauxqs lacks (S3 conditional writes,
 * SQS message move tasks). Each gap-filler steps aside when the emulator answers the feature
 * itself. Everything listens on 127.0.0.1.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import { buildApp } from 'fauxqs';
import * as v from 'valibot';
import {
  answerCloudFormation,
  CLOUDFORMATION_ACTIONS,
  type LocalStackRecord,
} from './cloudformation.ts';
import { startDynamoLocal } from './dynamodb-local.ts';
import { type FauxqsStores, fauxqsStores } from './fauxqs-store.ts';
import {
  type AnswerHook,
  answerError,
  BodyTooLargeError,
  forward,
  readBodyBytes,
  requestUpstream,
  type Upstream,
} from './http.ts';
import { answerLambda, isLambdaRequest, type LambdaBackend } from './lambda-api.ts';
import { answerLogs, LOGS_TARGET_PREFIX } from './logs-api.ts';
import { freePort } from './net.ts';
import {
  answerInjectedConflict,
  isObjectWrite,
  type S3PreconditionGaps,
  S3Preconditions,
} from './s3-preconditions.ts';
import { MOVE_TASK_ACTIONS, SqsMoveTasks } from './sqs-move-tasks.ts';
import { answerSqsQuery, SQS_QUERY_ACTIONS } from './sqs-query.ts';
import { acceptSupplementaryCharacters } from './sqs-unicode.ts';

export const LOCAL_REGION = 'us-east-1';
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/** One AWS call as the edge sees it. */
export interface EdgeCall {
  readonly service: 'dynamodb' | 'sqs' | 's3';
  /** The API action: `TransactWriteItems`, `SendMessageBatch`, `PutObject`… */
  readonly action: string;
  /** S3 object key, when there is one. */
  readonly key?: string;
  /** Who signed the request (the local runtime gives each environment its own key). */
  readonly accessKeyId: string | undefined;
}

/**
 * Hooks for fault injection at the edge: drop a call before it reaches the emulator, or drop
 * its answer after it took effect (the caller sees a dead connection, as after a crash).
 */
export interface EdgeHooks {
  beforeCall?(call: EdgeCall): Promise<'forward' | 'drop'> | 'forward' | 'drop';
  afterCall?(call: EdgeCall, status: number): Promise<'deliver' | 'drop'> | 'deliver' | 'drop';
}

const S3_ACTIONS: Record<string, string> = {
  PUT: 'PutObject',
  DELETE: 'DeleteObject',
  GET: 'GetObject',
  HEAD: 'HeadObject',
};

/** Names the call a request makes (enough for fault injection and reporting). */
export const describeCall = (req: IncomingMessage): EdgeCall => {
  const auth = req.headers.authorization ?? '';
  const accessKeyId = /Credential=([^/,\s]+)\//.exec(auth)?.[1];
  const target = req.headers['x-amz-target'];
  if (typeof target === 'string' && target.includes('.')) {
    const [prefix, action = ''] = target.split('.');
    return { service: prefix?.startsWith('DynamoDB') ? 'dynamodb' : 'sqs', action, accessKeyId };
  }
  const url = new URL(req.url ?? '/', 'http://edge');
  const [, , ...key] = url.pathname.split('/');
  const objectKey = decodeURIComponent(key.join('/'));
  return {
    service: 's3',
    action: objectKey
      ? (S3_ACTIONS[req.method ?? ''] ?? req.method ?? '')
      : `${req.method ?? ''}Bucket`,
    ...(objectKey ? { key: objectKey } : {}),
    accessKeyId,
  };
};

export interface Emulators {
  /** The one endpoint for every service: give it to the SDK as `endpoint` / AWS_ENDPOINT_URL. */
  readonly endpoint: string;
  readonly region: string;
  /** DynamoDB Local (the one part that runs in its own process, a JVM). */
  readonly dynamoLocal: RunningDynamoLocal;
  /** Which gap-fillers are active (false: the emulator supports the feature itself). */
  readonly gaps: {
    /** Which S3 conditional writes the edge emulates (false: the emulator honours it). */
    readonly s3Preconditions: S3PreconditionGaps;
    readonly moveTasks: boolean;
    /** Whether bodies with supplementary characters (emoji) are accepted, as SQS accepts them. */
    readonly supplementaryCharacters: boolean;
  };
  /** Makes a locally provisioned stack answer CloudFormation's DescribeStacks. */
  registerStack(stack: LocalStackRecord): void;
  /** Serves Lambda's API for these functions; returns how to stop serving them. */
  registerFunctions(backend: LambdaBackend): () => void;
  /** Adds fault hooks (runtimes sharing the emulators each add theirs); returns the remover. */
  addHooks(hooks: EdgeHooks): () => void;
  stop(): Promise<void>;
}

export interface EmulatorOptions {
  /** Edge port; taken when free, else any free port (like LocalStack's 4566). 0: any. */
  readonly port?: number;
  /** Told about anything that weakens the set-up (e.g. DynamoDB Local on all interfaces). */
  readonly warn?: (message: string) => void;
  /**
   * Keep tables, queues (with their messages) and buckets in this directory across restarts:
   * DynamoDB Local's `-dbPath` and fauxqs's SQLite store, both written through on every change.
   * Default: everything in memory, gone on stop.
   */
  readonly dataDir?: string;
  /** Told, once, when an emulator dies under the edge (the runtime cannot work without it). */
  readonly onFailure?: (message: string) => void;
  /**
   * A DynamoDB Local already running, used instead of starting one and left running on stop
   * (its tables are the caller's to keep apart: the test suite shares one JVM across its files,
   * each test with tables of its own). Cannot be combined with `dataDir`. Default: a DynamoDB
   * Local of its own.
   */
  readonly dynamoLocal?: RunningDynamoLocal;
}

/** Where a DynamoDB Local answers, and its JVM's process id. */
export interface RunningDynamoLocal {
  readonly endpoint: string;
  readonly pid: number;
}

/** The largest query-protocol body the edge reads (SQS's SendMessageBatch, URL-encoded, fits). */
const MAX_FORM_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Which of S3's conditional writes the emulator ignores, each probed on its own: a condition
 * that must fail, sent for real (true: ignored, so the edge emulates it).
 */
const probeS3Preconditions = async (fauxqs: string): Promise<S3PreconditionGaps> => {
  const bucket = `onceflow-probe-${Date.now()}`;
  const host = { host: new URL(fauxqs).host };
  const call = (method: string, key: string, headers: Record<string, string> = {}) =>
    requestUpstream(fauxqs, {
      method,
      path: `/${bucket}${key}`,
      headers: { ...host, ...headers },
      ...(method === 'PUT' && key ? { body: 'x' } : {}),
    });
  const stale = '"00000000000000000000000000000000"';
  await call('PUT', '');
  await call('PUT', '/probe');
  const gaps = {
    putIfNoneMatch: (await call('PUT', '/probe', { 'if-none-match': '*' })).status !== 412,
    putIfMatch: (await call('PUT', '/probe', { 'if-match': stale })).status !== 412,
    deleteIfMatch: (await call('DELETE', '/probe', { 'if-match': stale })).status !== 412,
  };
  await call('DELETE', '/probe');
  await call('DELETE', '');
  return gaps;
};

/** Does the emulator know StartMessageMoveTask? (An unknown action answers InvalidAction.) */
const probeMoveTasks = async (fauxqs: string): Promise<boolean> => {
  const answer = await requestUpstream(fauxqs, {
    method: 'POST',
    path: '/',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'AmazonSQS.ListMessageMoveTasks',
    },
    body: JSON.stringify({ SourceArn: 'arn:aws:sqs:us-east-1:000000000000:onceflow-probe' }),
  });
  return answer.body.includes('InvalidAction') || answer.body.includes('Unknown action');
};

/** The services the edge answers (itself or through an emulator). */
const SERVED_SERVICES = new Set([
  'dynamodb',
  'sqs',
  's3',
  'sns',
  'sts',
  'cloudformation',
  'lambda',
  'logs',
]);

/** The service a SigV4-signed request is for (its credential scope); undefined when unsigned. */
const signedService = (req: IncomingMessage): string | undefined => {
  const auth = req.headers.authorization ?? '';
  return /Credential=[^/]+\/\d{8}\/[^/]+\/([^/]+)\/aws4_request/.exec(auth)?.[1];
};

/** A service the edge does not serve: an error naming it, never another service's answer. */
const refuseService = (res: ServerResponse, service: string) => {
  res.writeHead(400, {
    'content-type': 'application/json',
    'x-amzn-errortype': 'UnknownOperationException',
  });
  res.end(
    JSON.stringify({
      __type: 'UnknownOperationException',
      message: `the onceflow local edge does not serve ${service}; it serves ${[...SERVED_SERVICES].join(', ')}`,
    }),
  );
};

/** Does the emulator accept a body with an emoji, as SQS does? (A real send, not a belief.) */
const probeSupplementaryCharacters = async (fauxqs: string): Promise<boolean> => {
  const call = (action: string, body: unknown) =>
    requestUpstream(fauxqs, {
      method: 'POST',
      path: '/',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `AmazonSQS.${action}`,
      },
      body: JSON.stringify(body),
    });
  const created = await call('CreateQueue', { QueueName: `onceflow-probe-${Date.now()}` });
  const { QueueUrl } = v.parse(v.object({ QueueUrl: v.string() }), JSON.parse(created.body));
  const sent = await call('SendMessage', { QueueUrl, MessageBody: 'probe \u{1F4E6}' });
  await call('DeleteQueue', { QueueUrl });
  return sent.status === 200;
};

export const startEmulators = async (options: EmulatorOptions = {}): Promise<Emulators> => {
  if (options.dynamoLocal && options.dataDir)
    throw new Error('dataDir keeps DynamoDB Local’s tables: it needs a DynamoDB Local of its own');
  const dynamo = options.dynamoLocal
    ? { ...options.dynamoLocal, stop: async () => {} }
    : await startDynamoLocal({
        ...(options.warn ? { warn: options.warn } : {}),
        ...(options.dataDir ? { dbPath: join(options.dataDir, 'dynamodb') } : {}),
        ...(options.onFailure ? { onUnexpectedExit: options.onFailure } : {}),
      });
  let stores: FauxqsStores | undefined;
  try {
    stores = await fauxqsStores(options.dataDir ? join(options.dataDir, 'fauxqs') : undefined);
  } catch (error) {
    if (options.dataDir) {
      await dynamo.stop();
      throw error;
    }
    // Without kept data fauxqs's own stores do, with queue URLs on sqs.<region>.localhost.
    options.warn?.(
      `queue URLs name sqs.${LOCAL_REGION}.localhost, which clients that send to the queue URL may not resolve (${(error as Error).message})`,
    );
  }
  // Queue URLs name the address the caller used (see fauxqs-store.ts).
  const app = buildApp({
    logger: false,
    defaultRegion: LOCAL_REGION,
    ...(stores ? { stores: stores.stores } : {}),
  });
  const closeFauxqs = async () => {
    await app.close();
    stores?.close();
  };
  let edge: Server | undefined;
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    const fauxqsEndpoint = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const fauxqs: Upstream = { url: fauxqsEndpoint, name: 'fauxqs (SQS, S3)' };
    const dynamodb: Upstream = { url: dynamo.endpoint, name: `DynamoDB Local (pid ${dynamo.pid})` };
    const gaps = {
      s3Preconditions: await probeS3Preconditions(fauxqsEndpoint),
      moveTasks: await probeMoveTasks(fauxqsEndpoint),
      supplementaryCharacters:
        (await acceptSupplementaryCharacters()) &&
        (await probeSupplementaryCharacters(fauxqsEndpoint)),
    };
    if (!gaps.supplementaryCharacters)
      options.warn?.('fauxqs refuses message bodies with emoji and other supplementary characters');
    const preconditions = new S3Preconditions(fauxqs, gaps.s3Preconditions);
    const moveTasks = new SqsMoveTasks(
      new SQSClient({
        endpoint: fauxqsEndpoint,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
      }),
    );

    const hookSets = new Set<EdgeHooks>();
    /** The edge's own address, once it listens (query-protocol SQS calls go through it again). */
    let edgeEndpoint = '';
    const stacks = new Map<string, LocalStackRecord>();
    const lambdas = new Set<LambdaBackend>();
    const route = async (req: IncomingMessage, res: ServerResponse) => {
      let onAnswer: AnswerHook | undefined;
      const current = [...hookSets];
      if (current.length > 0) {
        const call = describeCall(req);
        for (const hooks of current) {
          if ((await hooks.beforeCall?.(call)) === 'drop') {
            req.resume();
            res.socket?.destroy();
            return;
          }
        }
        onAnswer = async (status) => {
          let answer: 'deliver' | 'drop' = 'deliver';
          for (const hooks of current)
            if ((await hooks.afterCall?.(call, status)) === 'drop') answer = 'drop';
          return answer;
        };
      }
      const service = signedService(req);
      if (service !== undefined && !SERVED_SERVICES.has(service)) {
        req.resume();
        return refuseService(res, service);
      }
      if (service === 'lambda' || (service === undefined && isLambdaRequest(req)))
        return answerLambda(req, res, [...lambdas], LOCAL_REGION);
      if ((req.headers['content-type'] ?? '').includes('x-www-form-urlencoded')) {
        // Query protocol: CloudFormation (answered here) or SNS (fauxqs). The action is in the body.
        let body: Buffer;
        try {
          body = await readBodyBytes(req, MAX_FORM_BODY_BYTES);
        } catch (error) {
          if (!(error instanceof BodyTooLargeError)) throw error;
          res.setHeader('connection', 'close');
          return answerError(req, res, 413, 'RequestEntityTooLarge', error.message);
        }
        const params = new URLSearchParams(body.toString('utf8'));
        const action = params.get('Action') ?? '';
        if (CLOUDFORMATION_ACTIONS.has(action))
          return answerCloudFormation(params, stacks, LOCAL_REGION, res);
        if (service === 'sqs' || (service === undefined && SQS_QUERY_ACTIONS.has(action)))
          return answerSqsQuery(req, res, params, edgeEndpoint);
        return forward(req, res, fauxqs, onAnswer, body);
      }
      const target = req.headers['x-amz-target'];
      if (typeof target === 'string' && target.startsWith(LOGS_TARGET_PREFIX))
        return answerLogs(req, res, target.slice(LOGS_TARGET_PREFIX.length), [...lambdas]);
      if (typeof target === 'string' && target.startsWith('DynamoDB_')) {
        return forward(req, res, dynamodb, onAnswer);
      }
      const sqsAction = typeof target === 'string' ? target.replace(/^AmazonSQS\./, '') : undefined;
      const moveAction = MOVE_TASK_ACTIONS.find((a) => a === sqsAction);
      if (gaps.moveTasks && moveAction) return moveTasks.handle(req, res, moveAction);
      // fauxqs returns expired in-flight messages to their queue only when someone receives;
      // SQS does it when the visibility timeout ends, and its counts show it.
      if (sqsAction === 'GetQueueAttributes') stores?.expireVisibility();
      if (answerInjectedConflict(req, res)) return;
      if (preconditions.emulatesAny && isObjectWrite(req))
        return preconditions.handle(req, res, onAnswer);
      return forward(req, res, fauxqs, onAnswer);
    };
    edge = createServer((req, res) => {
      route(req, res).catch((error: Error) =>
        answerError(
          req,
          res,
          500,
          'InternalFailure',
          `the onceflow local edge failed: ${error.message}`,
        ),
      );
    });
    const server = edge;
    // Idle connections stay open until stop, as AWS endpoints keep them for minutes. Node's 5-s
    // default raced the SDK's agents (no idle timeout of their own), which could pick a socket
    // the edge was closing; after a busy machine's stall, each retry met another (ECONNRESET).
    server.keepAliveTimeout = 10 * 60_000;
    const port = await freePort(options.port ?? 0);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    edgeEndpoint = `http://127.0.0.1:${port}`;
    return {
      endpoint: edgeEndpoint,
      region: LOCAL_REGION,
      dynamoLocal: { endpoint: dynamo.endpoint, pid: dynamo.pid },
      gaps,
      registerStack: (stack) => {
        stacks.set(stack.name, stack);
      },
      registerFunctions: (backend) => {
        lambdas.add(backend);
        return () => {
          lambdas.delete(backend);
        };
      },
      addHooks: (hooks) => {
        hookSets.add(hooks);
        return () => hookSets.delete(hooks);
      },
      stop: async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await closeFauxqs();
        await dynamo.stop();
      },
    };
  } catch (error) {
    edge?.close();
    await closeFauxqs();
    await dynamo.stop();
    throw error;
  }
};
