/**
 * Counts DynamoDB requests and capacity units per AWS's billing rules, from an SDK middleware.
 * DynamoDB Local reports consumed capacity for successful calls, but 1 unit per transactional
 * item where AWS bills 2, and nothing for failed conditional writes (which AWS still bills):
 * those two are corrected here.
 */
import type { AttributeValue, ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import type { InitializeHandlerOptions, InitializeMiddleware, MetadataBearer } from '@smithy/types';
import { itemBytes, watermarkKey } from '../../adapters/dynamo-items.ts';

type Item = Record<string, AttributeValue>;
type AnyClient = {
  middlewareStack: {
    add(
      mw: InitializeMiddleware<object, MetadataBearer>,
      options: InitializeHandlerOptions & {
        name: string;
        override?: boolean;
        priority?: 'high' | 'normal' | 'low';
      },
    ): void;
  };
};

const WRITES = new Set([
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
]);
const METERED = new Set([
  ...WRITES,
  'GetItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'TransactGetItems',
]);

const unitsFor = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

export class CapacityMeter {
  requests = 0;
  writeUnits = 0;
  readUnits = 0;
  /** Of the write units, those spent keeping the watermark (its one item). */
  watermarkWriteUnits = 0;
  /** Requests by operation, e.g. { PutItem: 120, TransactWriteItems: 40 }. */
  readonly byOperation = new Map<string, number>();
  /** Write units billed for failed conditions, by operation (included in writeUnits). */
  readonly failedConditionUnits = new Map<string, number>();

  reset(): void {
    this.requests = 0;
    this.writeUnits = 0;
    this.readUnits = 0;
    this.watermarkWriteUnits = 0;
    this.byOperation.clear();
    this.failedConditionUnits.clear();
  }

  snapshot() {
    return {
      requests: this.requests,
      writeUnits: this.writeUnits,
      readUnits: this.readUnits,
      watermarkWriteUnits: this.watermarkWriteUnits,
      failedConditionUnits: Object.fromEntries(this.failedConditionUnits),
    };
  }

  attach<T extends AnyClient>(client: T): T {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const operation = (context.commandName ?? '').replace(/Command$/, '');
        if (!METERED.has(operation)) return next(args);
        const input = args.input as Record<string, unknown>;
        // INDEXES: the table's units and each index's apart.
        input.ReturnConsumedCapacity = 'INDEXES';
        this.requests++;
        this.byOperation.set(operation, (this.byOperation.get(operation) ?? 0) + 1);
        const onWatermark = (input.Key as Item | undefined)?.pk?.S === watermarkKey.pk;
        try {
          const result = await next(args);
          const output = result.output as {
            ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[];
          };
          const capacities = [output.ConsumedCapacity ?? []].flat();
          const consumed = capacities.reduce((s, c) => s + (c.CapacityUnits ?? 0), 0);
          const indexUnits = capacities.reduce(
            (s, c) =>
              s +
              Object.values(c.GlobalSecondaryIndexes ?? {}).reduce(
                (n, i) => n + (i.CapacityUnits ?? 0),
                0,
              ),
            0,
          );
          if (operation === 'TransactWriteItems') {
            // AWS bills two units per item (per KB); DynamoDB Local may report one. Index updates
            // are reported already doubled.
            const items = (input.TransactItems as unknown[]).length;
            this.writeUnits += Math.max(consumed - indexUnits, items) * 2 + indexUnits;
          } else if (WRITES.has(operation)) {
            this.writeUnits += consumed || 1;
            if (onWatermark) this.watermarkWriteUnits += consumed || 1;
          } else if (operation === 'BatchGetItem') {
            // AWS bills each key read, found or not, at least the minimum (1 unit strongly
            // consistent, half eventually); DynamoDB Local reports nothing for a missing item.
            const requested = Object.entries(
              (input.RequestItems ?? {}) as Record<
                string,
                { Keys?: unknown[]; ConsistentRead?: boolean }
              >,
            );
            const unprocessed = (
              result.output as { UnprocessedKeys?: Record<string, { Keys?: unknown[] }> }
            ).UnprocessedKeys;
            const minimum = requested.reduce(
              (s, [table, r]) =>
                s +
                ((r.Keys?.length ?? 0) - (unprocessed?.[table]?.Keys?.length ?? 0)) *
                  (r.ConsistentRead ? 1 : 0.5),
              0,
            );
            this.readUnits += Math.max(consumed, minimum);
          } else this.readUnits += consumed;
          return result;
        } catch (error) {
          const name = (error as Error).name;
          if (name === 'ConditionalCheckFailedException') {
            // A failed condition still bills the write it would have made.
            const units = unitsFor(itemBytes((input.Item ?? input.Key) as Item));
            this.writeUnits += units;
            // The watermark's forward-only write losing to a later step is its own cost.
            if (onWatermark) this.watermarkWriteUnits += units;
            else
              this.failedConditionUnits.set(
                operation,
                (this.failedConditionUnits.get(operation) ?? 0) + units,
              );
          } else if (name === 'TransactionCanceledException') {
            this.writeUnits += 2 * (input.TransactItems as unknown[]).length;
          }
          throw error;
        }
      },
      // Innermost: it sees every call that reached DynamoDB, even one a crash fault then hides.
      { step: 'initialize', priority: 'low', name: 'capacityMeter', override: true },
    );
    return client;
  }
}

export { itemBytes };

/** S3 request classes as billed: PUT, COPY, POST and LIST; GET and every other; DELETE free. */
const s3ClassOf = (operation: string): 'put' | 'get' | 'free' =>
  /^(Put|Copy|Post|List|Create|Upload|Complete)/.test(operation)
    ? 'put'
    : /^Delete/.test(operation)
      ? 'free'
      : 'get';

const SQS_CHUNK_BYTES = 64 * 1024;
const bytes = (texts: readonly (string | undefined)[]) =>
  texts.reduce((sum, t) => sum + Buffer.byteLength(t ?? '', 'utf8'), 0);

/**
 * Counts S3 and SQS requests as AWS bills them, from an SDK middleware: S3 by request class,
 * SQS in 64 KB chunks of payload (a request of 1 to 10 messages is billed one request per 64 KB
 * chunk of its messages), and Lambda invocations with their billed durations (whole ms).
 */
export class RequestMeter {
  s3Put = 0;
  s3Get = 0;
  sqsRequests = 0;
  /** Of them, to FIFO queues (the coalescing aggregate queue), billed at the FIFO price. */
  sqsFifoRequests = 0;
  invocations = 0;
  billedMs = 0;
  gbSeconds = 0;

  snapshot() {
    return {
      s3PutRequests: this.s3Put,
      s3GetRequests: this.s3Get,
      sqsRequests: this.sqsRequests,
      sqsFifoRequests: this.sqsFifoRequests,
      lambdaInvocations: this.invocations,
      lambdaBilledMs: this.billedMs,
      lambdaGbSeconds: this.gbSeconds,
    };
  }

  /** Meters an S3 or SQS client (by the service its commands belong to). */
  attach<T extends AnyClient>(client: T, service: 's3' | 'sqs'): T {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const operation = (context.commandName ?? '').replace(/Command$/, '');
        const input = args.input as {
          QueueUrl?: string;
          MessageBody?: string;
          Entries?: { MessageBody?: string }[];
        };
        if (service === 's3') {
          const kind = s3ClassOf(operation);
          if (kind === 'put') this.s3Put++;
          else if (kind === 'get') this.s3Get++;
          return next(args);
        }
        const result = await next(args);
        const output = result.output as { Messages?: { Body?: string }[] };
        const payload =
          bytes([input.MessageBody]) +
          bytes((input.Entries ?? []).map((e) => e.MessageBody)) +
          bytes((output.Messages ?? []).map((m) => m.Body));
        const requests = Math.max(1, Math.ceil(payload / SQS_CHUNK_BYTES));
        this.sqsRequests += requests;
        if (input.QueueUrl?.endsWith('.fifo')) this.sqsFifoRequests += requests;
        return result;
      },
      { step: 'initialize', priority: 'low', name: 'requestMeter', override: true },
    );
    return client;
  }

  /**
   * A handler whose invocations are counted and timed: billed per started millisecond, at the
   * function's configured memory.
   */
  timed<A extends unknown[], R>(handler: (...args: A) => Promise<R>, memoryMb: number) {
    return async (...args: A): Promise<R> => {
      const started = performance.now();
      try {
        return await handler(...args);
      } finally {
        const ms = Math.ceil(performance.now() - started);
        this.invocations++;
        this.billedMs += ms;
        this.gbSeconds += (ms / 1000) * (memoryMb / 1024);
      }
    };
  }
}
