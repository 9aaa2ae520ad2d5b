/**
 * The embedded AWS emulators behind one edge endpoint on 127.0.0.1: DynamoDB Local (Java),
 * fauxqs (in-process SQS, SNS, S3) with gap-fillers that step aside where fauxqs has the feature,
 * and the edge's own CloudFormation, Lambda, CloudWatch, CloudWatch Logs, EventBridge, Scheduler.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { buildApp } from 'fauxqs';
import type { AlarmBook } from './alarm-book.ts';
import {
  answerCloudFormation,
  CLOUDFORMATION_ACTIONS,
  type LocalStackRecord,
} from './cloudformation.ts';
import {
  answerCloudWatch,
  CLOUDWATCH_ACTIONS,
  CLOUDWATCH_TARGET_PREFIX,
} from './cloudwatch-api.ts';
import { answerCloudWatchCbor, cborCloudWatchAction } from './cloudwatch-cbor.ts';
import { answerCloudWatchQuery, CLOUDWATCH_QUERY_VERSION } from './cloudwatch-query.ts';
import { type RunningDynamoLocal, startDynamoLocal } from './dynamodb-local.ts';
import { edgeCloudWatch } from './edge-cloudwatch.ts';
import { answerEvents, EVENTS_TARGET_PREFIX } from './events-api.ts';
import { DEFAULT_READ_LAG_MS, LaggingReads } from './eventual-reads.ts';
import { type FauxqsGaps, probeFauxqsGaps } from './fauxqs-gaps.ts';
import { type FauxqsStores, fauxqsStores } from './fauxqs-store.ts';
import {
  type AnswerHook,
  answerError,
  BodyTooLargeError,
  forward,
  readBodyBytes,
  refuseService,
  type Upstream,
} from './http.ts';
import { answerLambda, isLambdaRequest, type LambdaBackend } from './lambda-api.ts';
import { answerLogs, LOGS_TARGET_PREFIX } from './logs-api.ts';
import type { MetricStore } from './metrics.ts';
import { freePort } from './net.ts';
import { releaseOrphaned } from './orphaned-receives.ts';
import { LOCAL_ACCOUNT } from './provision-functions.ts';
import { answerInjectedConflict, isObjectWrite, S3Preconditions } from './s3-preconditions.ts';
import { answerScheduler } from './scheduler-api.ts';
import { MOVE_TASK_ACTIONS, SqsMoveTasks } from './sqs-move-tasks.ts';
import { answerSqsQuery, SQS_QUERY_ACTIONS } from './sqs-query.ts';

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
  readonly gaps: FauxqsGaps;
  /** How old an eventually consistent read's answer may be (EmulatorOptions.readLagMs). */
  readonly readLagMs: number;
  /** Makes a locally provisioned stack answer CloudFormation's DescribeStacks. */
  registerStack(stack: LocalStackRecord): void;
  /** Serves Lambda's API for these functions; returns how to stop serving them. */
  registerFunctions(backend: LambdaBackend): () => void;
  /** CloudWatch's metrics in this account and region: every runtime on the edge publishes here. */
  readonly metrics: MetricStore;
  /** CloudWatch's alarms in this account and region: each runtime adopts its stack's. */
  readonly alarms: AlarmBook;
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
  /**
   * How old an answer DynamoDB's eventually consistent reads may get, in ms (see
   * `eventual-reads.ts`); 0 answers every read fresh, as DynamoDB Local does. Default 1000: the
   * second within which, AWS says, replicas usually agree.
   */
  readonly readLagMs?: number;
}

/** The largest query-protocol body the edge reads (SQS's SendMessageBatch, URL-encoded, fits). */
const MAX_FORM_BODY_BYTES = 16 * 1024 * 1024;

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
  'events',
  'scheduler',
  'monitoring',
]);

/** The service a SigV4-signed request is for (its credential scope); undefined when unsigned. */
const signedService = (req: IncomingMessage): string | undefined => {
  const auth = req.headers.authorization ?? '';
  return /Credential=[^/]+\/\d{8}\/[^/]+\/([^/]+)\/aws4_request/.exec(auth)?.[1];
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
  let stopCloudWatch = () => {};
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    const fauxqsEndpoint = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const fauxqs: Upstream = { url: fauxqsEndpoint, name: 'fauxqs (SQS, S3)' };
    const dynamodb: Upstream = { url: dynamo.endpoint, name: `DynamoDB Local (pid ${dynamo.pid})` };
    const gaps = await probeFauxqsGaps(fauxqsEndpoint);
    if (!gaps.supplementaryCharacters)
      options.warn?.('fauxqs refuses message bodies with emoji and other supplementary characters');
    if (!gaps.fifoGroupReceives)
      options.warn?.(
        'fauxqs gives one message per group per FIFO receive, where SQS gives as many of a group as it can',
      );
    const preconditions = new S3Preconditions(fauxqs, gaps.s3Preconditions);
    const replica = new LaggingReads({ lagMs: options.readLagMs ?? DEFAULT_READ_LAG_MS });
    const config = {
      endpoint: fauxqsEndpoint,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
    };
    const fauxqsSqs = new SQSClient(config);
    const moveTasks = new SqsMoveTasks(fauxqsSqs);
    const account = { region: LOCAL_REGION, account: LOCAL_ACCOUNT };
    const clients = { sqs: fauxqsSqs, sns: new SNSClient(config) };
    const cloudWatch = edgeCloudWatch(account, clients, stores, options.warn);
    stopCloudWatch = cloudWatch.stop;

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
        return refuseService(res, service, SERVED_SERVICES);
      }
      const cborAction = cborCloudWatchAction(req);
      if (cborAction !== undefined) return answerCloudWatchCbor(req, res, cborAction, cloudWatch);
      if (service === 'lambda' || (service === undefined && isLambdaRequest(req)))
        return answerLambda(req, res, [...lambdas], LOCAL_REGION);
      if (service === 'scheduler')
        return answerScheduler(
          req,
          res,
          [...lambdas].flatMap((b) => (b.scheduler ? [b.scheduler] : [])),
        );
      if ((req.headers['content-type'] ?? '').includes('x-www-form-urlencoded')) {
        // Query protocol: CloudFormation and CloudWatch (answered here), SQS (translated) or SNS
        // (fauxqs). The action is in the body.
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
          return answerCloudFormation(action, params, stacks, LOCAL_REGION, res);
        if (
          service === 'monitoring' ||
          (service === undefined &&
            params.get('Version') === CLOUDWATCH_QUERY_VERSION &&
            CLOUDWATCH_ACTIONS.has(action))
        )
          return answerCloudWatchQuery(res, params, cloudWatch);
        if (service === 'sqs' || (service === undefined && SQS_QUERY_ACTIONS.has(action)))
          return answerSqsQuery(req, res, params, edgeEndpoint);
        return forward(req, res, fauxqs, onAnswer, body);
      }
      const target = req.headers['x-amz-target'];
      if (typeof target === 'string' && target.startsWith(CLOUDWATCH_TARGET_PREFIX))
        return answerCloudWatch(
          req,
          res,
          target.slice(CLOUDWATCH_TARGET_PREFIX.length),
          cloudWatch,
        );
      if (typeof target === 'string' && target.startsWith(LOGS_TARGET_PREFIX))
        return answerLogs(req, res, target.slice(LOGS_TARGET_PREFIX.length), [...lambdas]);
      if (typeof target === 'string' && target.startsWith(EVENTS_TARGET_PREFIX)) {
        const rules = [...lambdas].flatMap((b) => (b.rules ? [b.rules] : []));
        return answerEvents(req, res, target.slice(EVENTS_TARGET_PREFIX.length), rules);
      }
      if (typeof target === 'string' && target.startsWith('DynamoDB_')) {
        const action = target.slice(target.indexOf('.') + 1);
        if (replica.mayLag(action)) return replica.handle(req, res, dynamodb, action, onAnswer);
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
      if (sqsAction === 'ReceiveMessage') {
        const body = await readBodyBytes(req, MAX_FORM_BODY_BYTES);
        return forward(req, res, fauxqs, onAnswer, body, (answer) => {
          releaseOrphaned(fauxqs.url, body, answer).catch((error: Error) =>
            options.warn?.(`a receive abandoned by its caller kept its messages: ${error.message}`),
          );
        });
      }
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
      readLagMs: replica.lagMs,
      metrics: cloudWatch.metrics,
      alarms: cloudWatch.alarms,
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
        stopCloudWatch();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await closeFauxqs();
        await dynamo.stop();
      },
    };
  } catch (error) {
    edge?.close();
    stopCloudWatch();
    await closeFauxqs();
    await dynamo.stop();
    throw error;
  }
};
