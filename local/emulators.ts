/**
 * The embedded AWS emulators behind one edge endpoint: DynamoDB Local (Java) and fauxqs
 * (in-process SQS and S3), with a small gap-filler for what fauxqs lacks (S3 conditional writes,
 * SQS message move tasks). Each gap-filler steps aside when the emulator answers the feature
 * itself. Everything listens on 127.0.0.1.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { SQSClient } from '@aws-sdk/client-sqs';
import { buildApp } from 'fauxqs';
import {
  answerCloudFormation,
  CLOUDFORMATION_ACTIONS,
  type LocalStackRecord,
} from './cloudformation.ts';
import { startDynamoLocal } from './dynamodb-local.ts';
import { type AnswerHook, forward, readBodyBytes, requestUpstream } from './http.ts';
import { answerLambda, isLambdaRequest, type LambdaBackend } from './lambda-api.ts';
import { freePort } from './net.ts';
import { answerInjectedConflict, isObjectWrite, S3Preconditions } from './s3-preconditions.ts';
import { MOVE_TASK_ACTIONS, SqsMoveTasks } from './sqs-move-tasks.ts';
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
  readonly dynamoEndpoint: string;
  readonly fauxqsEndpoint: string;
  /** Which gap-fillers are active (false: the emulator supports the feature itself). */
  readonly gaps: {
    readonly s3Preconditions: boolean;
    readonly moveTasks: boolean;
    /** Whether bodies with supplementary characters (emoji) are accepted, as SQS accepts them. */
    readonly supplementaryCharacters: boolean;
  };
  /** Makes a locally provisioned stack answer CloudFormation's DescribeStacks. */
  registerStack(stack: LocalStackRecord): void;
  /** Serves Lambda's API for these functions; returns how to stop serving them. */
  registerFunctions(backend: LambdaBackend): () => void;
  /** Installs (or, with undefined, removes) fault-injection hooks. */
  setHooks(hooks: EdgeHooks | undefined): void;
  stop(): Promise<void>;
}

export interface EmulatorOptions {
  /** Edge port; taken when free, else any free port (like LocalStack's 4566). 0: any. */
  readonly port?: number;
  /** Told about anything that weakens the set-up (e.g. DynamoDB Local on all interfaces). */
  readonly warn?: (message: string) => void;
}

/** Does the emulator honour `If-None-Match: *` on PutObject by itself? */
const probeS3Preconditions = async (fauxqs: string): Promise<boolean> => {
  const bucket = `onceflow-probe-${Date.now()}`;
  const host = { host: new URL(fauxqs).host };
  await requestUpstream(fauxqs, { method: 'PUT', path: `/${bucket}`, headers: host });
  const put = (headers: Record<string, string>) =>
    requestUpstream(fauxqs, {
      method: 'PUT',
      path: `/${bucket}/probe`,
      headers: { ...host, ...headers },
      body: 'x',
    });
  await put({});
  const second = await put({ 'if-none-match': '*' });
  await requestUpstream(fauxqs, { method: 'DELETE', path: `/${bucket}/probe`, headers: host });
  await requestUpstream(fauxqs, { method: 'DELETE', path: `/${bucket}`, headers: host });
  return second.status !== 412;
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
  const { QueueUrl } = JSON.parse(created.body) as { QueueUrl?: string };
  const sent = await call('SendMessage', { QueueUrl, MessageBody: 'probe \u{1F4E6}' });
  await call('DeleteQueue', { QueueUrl });
  return sent.status === 200;
};

export const startEmulators = async (options: EmulatorOptions = {}): Promise<Emulators> => {
  const dynamo = await startDynamoLocal(options.warn ? { warn: options.warn } : {});
  const app = buildApp({ logger: false, host: 'localhost', defaultRegion: LOCAL_REGION });
  let edge: Server | undefined;
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    const fauxqsEndpoint = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const gaps = {
      s3Preconditions: await probeS3Preconditions(fauxqsEndpoint),
      moveTasks: await probeMoveTasks(fauxqsEndpoint),
      supplementaryCharacters:
        (await acceptSupplementaryCharacters()) &&
        (await probeSupplementaryCharacters(fauxqsEndpoint)),
    };
    if (!gaps.supplementaryCharacters)
      options.warn?.('fauxqs refuses message bodies with emoji and other supplementary characters');
    const preconditions = new S3Preconditions(fauxqsEndpoint);
    const moveTasks = new SqsMoveTasks(
      new SQSClient({
        endpoint: fauxqsEndpoint,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
      }),
    );

    let hooks: EdgeHooks | undefined;
    const stacks = new Map<string, LocalStackRecord>();
    const lambdas = new Set<LambdaBackend>();
    const route = async (req: IncomingMessage, res: ServerResponse) => {
      let onAnswer: AnswerHook | undefined;
      const current = hooks;
      if (current) {
        const call = describeCall(req);
        if ((await current.beforeCall?.(call)) === 'drop') {
          req.resume();
          res.socket?.destroy();
          return;
        }
        const after = current.afterCall?.bind(current);
        if (after) onAnswer = async (status) => after(call, status);
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
        const body = await readBodyBytes(req);
        const params = new URLSearchParams(body.toString('utf8'));
        const action = params.get('Action') ?? '';
        if (CLOUDFORMATION_ACTIONS.has(action))
          return answerCloudFormation(params, stacks, LOCAL_REGION, res);
        return forward(req, res, fauxqsEndpoint, onAnswer, body);
      }
      const target = req.headers['x-amz-target'];
      if (typeof target === 'string' && target.startsWith('DynamoDB_')) {
        return forward(req, res, dynamo.endpoint, onAnswer);
      }
      const sqsAction = typeof target === 'string' ? target.replace(/^AmazonSQS\./, '') : undefined;
      const moveAction = MOVE_TASK_ACTIONS.find((a) => a === sqsAction);
      if (gaps.moveTasks && moveAction) return moveTasks.handle(req, res, moveAction);
      if (answerInjectedConflict(req, res)) return;
      if (gaps.s3Preconditions && isObjectWrite(req))
        return preconditions.handle(req, res, onAnswer);
      return forward(req, res, fauxqsEndpoint, onAnswer);
    };
    edge = createServer((req, res) => {
      route(req, res).catch((error: Error) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`edge error: ${error.message}`);
      });
    });
    const server = edge;
    const port = await freePort(options.port ?? 0);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    return {
      endpoint: `http://127.0.0.1:${port}`,
      region: LOCAL_REGION,
      dynamoEndpoint: dynamo.endpoint,
      fauxqsEndpoint,
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
      setHooks: (next) => {
        hooks = next;
      },
      stop: async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await app.close();
        await dynamo.stop();
      },
    };
  } catch (error) {
    edge?.close();
    await app.close();
    await dynamo.stop();
    throw error;
  }
};
