/**
 * The bench's dollars rest on how it counts requests: SQS in 64 KB chunks of payload, FIFO apart,
 * S3 by request class, Lambda per started millisecond at the configured memory. Counted here on
 * real calls to the emulators, then priced.
 */
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { RequestMeter } from '../../harness/bench/meter.ts';
import { dollarsOf, PRICES } from '../../harness/bench/prices.ts';
import { clientConfig, uniqueName } from '../support/pipeline.ts';

const KB = 1024;
const CHUNK = 64 * KB;

describe('the bench’s request meter', () => {
  it('bills each SQS request per 64 KB chunk of the messages it carries, FIFO queues apart', async () => {
    const meter = new RequestMeter();
    const sqs = meter.attach(new SQSClient(clientConfig()), 'sqs');
    const { QueueUrl: standard = '' } = await sqs.send(
      new CreateQueueCommand({ QueueName: uniqueName('billed') }),
    );
    const { QueueUrl: fifo = '' } = await sqs.send(
      new CreateQueueCommand({
        QueueName: `${uniqueName('billed')}.fifo`,
        Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
      }),
    );
    const counts = () => ({ all: meter.sqsRequests, fifo: meter.sqsFifoRequests });
    // Two creates: one request each, nothing carried.
    expect(counts()).toEqual({ all: 2, fifo: 0 });

    await sqs.send(new SendMessageCommand({ QueueUrl: standard, MessageBody: 'x'.repeat(CHUNK) }));
    expect(counts()).toEqual({ all: 3, fifo: 0 });
    await sqs.send(
      new SendMessageCommand({ QueueUrl: standard, MessageBody: 'x'.repeat(CHUNK + 1) }),
    );
    expect(counts()).toEqual({ all: 5, fifo: 0 });
    // Bytes, not characters: 22,000 three-byte characters are 66,000 bytes, two chunks.
    await sqs.send(new SendMessageCommand({ QueueUrl: standard, MessageBody: '€'.repeat(22_000) }));
    expect(counts()).toEqual({ all: 7, fifo: 0 });
    // A batch is one request per 64 KB of all its messages together: 10 × 20 KB is 4 chunks.
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: standard,
        Entries: Array.from({ length: 10 }, (_, i) => ({
          Id: `m${i}`,
          MessageBody: 'y'.repeat(20 * KB),
        })),
      }),
    );
    expect(counts()).toEqual({ all: 11, fifo: 0 });
    // A receive is billed on the messages it brings back, however many of the 13 that is.
    const received = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: standard, MaxNumberOfMessages: 10 }),
    );
    const brought = (received.Messages ?? []).reduce(
      (s, m) => s + Buffer.byteLength(m.Body ?? ''),
      0,
    );
    expect(received.Messages?.length).toBeGreaterThan(0);
    expect(meter.sqsRequests - 11).toBe(Math.max(1, Math.ceil(brought / CHUNK)));

    const before = meter.sqsRequests;
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: fifo,
        MessageBody: 'z'.repeat(2 * CHUNK),
        MessageGroupId: 'g',
      }),
    );
    expect({ all: meter.sqsRequests - before, fifo: meter.sqsFifoRequests }).toEqual({
      all: 2,
      fifo: 2,
    });
  });

  it('bills S3 requests by class: PUT, COPY, POST and LIST; GET and the rest; DELETE free', async () => {
    const meter = new RequestMeter();
    const s3 = meter.attach(new S3Client({ ...clientConfig(), forcePathStyle: true }), 's3');
    const Bucket = uniqueName('billed');
    await s3.send(new CreateBucketCommand({ Bucket }));
    await s3.send(new PutObjectCommand({ Bucket, Key: 'a', Body: 'a' }));
    await s3.send(new ListObjectsV2Command({ Bucket }));
    expect({ put: meter.s3Put, get: meter.s3Get }).toEqual({ put: 3, get: 0 });
    // Read to its end: an unread body keeps its connection open.
    await (await s3.send(new GetObjectCommand({ Bucket, Key: 'a' }))).Body?.transformToString();
    await s3.send(new HeadObjectCommand({ Bucket, Key: 'a' }));
    await s3.send(new DeleteObjectCommand({ Bucket, Key: 'a' }));
    expect({ put: meter.s3Put, get: meter.s3Get }).toEqual({ put: 3, get: 2 });
  });

  it('bills each invocation per started millisecond at the configured memory, a failed one too', async () => {
    const meter = new RequestMeter();
    const handler = meter.timed(async (fail: boolean) => {
      await new Promise((r) => setTimeout(r, 5));
      if (fail) throw new Error('failed');
      return 'done';
    }, 512);
    expect(await handler(false)).toBe('done');
    await expect(handler(true)).rejects.toThrow('failed');
    expect(meter.invocations).toBe(2);
    expect(Number.isInteger(meter.billedMs)).toBe(true);
    // Each waited at least 5 ms (a timer may fire up to a millisecond early).
    expect(meter.billedMs).toBeGreaterThanOrEqual(8);
    expect(meter.gbSeconds).toBeCloseTo((meter.billedMs / 1000) * 0.5, 12);
  });
});

describe('the bench’s prices', () => {
  it('prices each service’s units at its list price, FIFO requests at FIFO’s', () => {
    const million = {
      writeUnits: 1e6,
      readUnits: 1e6,
      s3PutRequests: 1e6,
      s3GetRequests: 1e6,
      sqsRequests: 3e6,
      sqsFifoRequests: 1e6,
      lambdaInvocations: 1e6,
      lambdaGbSeconds: 1e6,
    };
    const d = dollarsOf(million);
    expect(d.dynamodb).toBeCloseTo(0.625 + 0.125, 9);
    expect(d.s3).toBeCloseTo(5 + 0.4, 9);
    // 2 million standard requests at $0.40 a million, 1 million FIFO ones at $0.50.
    expect(d.sqs).toBeCloseTo(0.8 + 0.5, 9);
    expect(d.lambda).toBeCloseTo(0.2 + 13.3334, 9);
    expect(d.total).toBeCloseTo(d.dynamodb + d.s3 + d.sqs + d.lambda, 9);
    expect(PRICES.readOn).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});
