/**
 * Real third-party clients against the local edge, as developers point theirs at it: the AWS SDK
 * for JavaScript v3 (JSON protocol), v2 (2.1490, the last release that speaks SQS's query
 * protocol, like the AWS CLI before 2.13 and the SDK for Java v1), and the AWS CLI when the
 * machine has one (skipped with a printed reason otherwise).
 */
import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import AWS from 'aws-sdk';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoOrderReader } from '../../adapters/dynamo-order-reader.ts';
import { S3Store } from '../../adapters/s3.ts';
import { LOCAL_CREDENTIALS } from '../../local/emulators.ts';
import { waitFor } from '../../local/net.ts';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.ts';
import { awsCli, awsCliVersion, reportMissingAwsCli } from '../support/aws-cli.ts';
import { DEADLINE_MS } from '../support/deadlines.ts';
import { sharedDynamoLocal } from '../support/emulators.ts';
import { expectedHourly, expectedOrders, seedBatches } from '../support/fixtures.ts';
import { uniqueName } from '../support/pipeline.ts';

let runtime: LocalRuntime;
let v2: { sqs: AWS.SQS; dynamo: AWS.DynamoDB; s3: AWS.S3 };

beforeAll(async () => {
  const { assemblyDir, stackName } = inject('assembly');
  runtime = await startLocalRuntime({
    assemblyDir,
    stackName,
    localStackName: uniqueName('clients'),
    dynamoLocal: sharedDynamoLocal(),
    retryDelaySeconds: 1,
  });
  const config = {
    endpoint: runtime.endpoint,
    region: runtime.region,
    credentials: new AWS.Credentials(LOCAL_CREDENTIALS),
    maxRetries: 0,
  };
  v2 = {
    sqs: new AWS.SQS(config),
    dynamo: new AWS.DynamoDB(config),
    s3: new AWS.S3({ ...config, s3ForcePathStyle: true }),
  };
});
afterAll(async () => {
  await runtime?.stop();
});

const output = (name: string) => {
  const value = runtime.stack.outputs[name];
  if (!value) throw new Error(`the stack has no output ${name}`);
  return value;
};

/** Waits until the pipeline applied and aggregated everything sent, then reads its state. */
const settledState = async () => {
  await runtime.drain({ timeoutMs: DEADLINE_MS });
  const orders = await new DynamoOrderReader(
    runtime.clients.dynamo,
    output('TableName'),
  ).listOrders();
  const hours = await new S3Store(runtime.clients.s3, output('BucketName')).listAggregates();
  return { orders, hours: hours.map(({ hour, events, byStatus }) => ({ hour, events, byStatus })) };
};

describe('the AWS SDK for JavaScript v2 over SQS’s query protocol', () => {
  it('lists the stack’s queues, sends the reference stream with SendMessageBatch, and reads the orders and hour objects back', async () => {
    const { QueueUrls = [] } = await v2.sqs.listQueues({}).promise();
    expect(QueueUrls).toContain(output('OrdersQueueUrl'));
    const { QueueUrl } = await v2.sqs
      .getQueueUrl({ QueueName: output('OrdersQueueUrl').split('/').pop() ?? '' })
      .promise();
    expect(QueueUrl).toBe(output('OrdersQueueUrl'));

    // The SDK checks the MD5 of every body it sends: a wrong translation fails here.
    const sent = await v2.sqs
      .sendMessageBatch({
        QueueUrl: output('OrdersQueueUrl'),
        Entries: seedBatches().map((body, i) => ({ Id: `b${i}`, MessageBody: body })),
      })
      .promise();
    expect(sent.Failed).toEqual([]);
    expect(sent.Successful.map((s) => s.Id)).toEqual(['b0', 'b1', 'b2', 'b3']);

    const state = await settledState();
    expect(state.orders).toEqual(expectedOrders());
    expect(state.hours).toEqual(expectedHourly());

    // Read back with v2's own DynamoDB and S3 clients too.
    const scanned = await v2.dynamo.scan({ TableName: output('TableName') }).promise();
    expect(scanned.Count).toBeGreaterThan(0);
    const listed = await v2.s3
      .listObjectsV2({ Bucket: output('BucketName'), Prefix: 'aggregates/hourly/' })
      .promise();
    const first = listed.Contents?.[0]?.Key;
    expect(first).toBeDefined();
    const object = await v2.s3
      .getObject({ Bucket: output('BucketName'), Key: first ?? '' })
      .promise();
    expect(JSON.parse(String(object.Body))).toMatchObject({ hour: expect.any(String) });
  });

  it('answers attributes, receive with message attributes, visibility changes, deletes, tags and purge as SQS does', async () => {
    const { QueueUrl = '' } = await v2.sqs
      .createQueue({
        QueueName: uniqueName('v2'),
        Attributes: { VisibilityTimeout: '45' },
        tags: { team: 'orders' },
      })
      .promise();
    const attributes = await v2.sqs
      .getQueueAttributes({ QueueUrl, AttributeNames: ['VisibilityTimeout', 'QueueArn'] })
      .promise();
    expect(attributes.Attributes?.VisibilityTimeout).toBe('45');
    expect(attributes.Attributes?.QueueArn).toMatch(/^arn:aws:sqs:us-east-1:\d{12}:/);
    expect((await v2.sqs.listQueueTags({ QueueUrl }).promise()).Tags).toEqual({ team: 'orders' });

    // Markup, a CR LF (which a conforming XML parser, the AWS CLI's, reads as LF unless it is
    // escaped) and an emoji in the body, binary and string attributes: the MD5s the SDK checks
    // cover all of them.
    const body = '<order id="1">shipped & paid\r\n\u{1F4E6}</order>';
    await v2.sqs
      .sendMessage({
        QueueUrl,
        MessageBody: body,
        MessageAttributes: {
          source: { DataType: 'String', StringValue: 'pos-7' },
          blob: { DataType: 'Binary', BinaryValue: Buffer.from([0, 1, 2, 255]) },
        },
      })
      .promise();
    const received = await v2.sqs
      .receiveMessage({
        QueueUrl,
        MaxNumberOfMessages: 10,
        AttributeNames: ['ApproximateReceiveCount'],
        MessageAttributeNames: ['All'],
      })
      .promise();
    const [message] = received.Messages ?? [];
    expect(message?.Body).toBe(body);
    expect(message?.Attributes?.ApproximateReceiveCount).toBe('1');
    expect(message?.MessageAttributes?.source?.StringValue).toBe('pos-7');
    expect(Buffer.from(message?.MessageAttributes?.blob?.BinaryValue as Buffer)).toEqual(
      Buffer.from([0, 1, 2, 255]),
    );

    await v2.sqs
      .changeMessageVisibility({
        QueueUrl,
        ReceiptHandle: message?.ReceiptHandle ?? '',
        VisibilityTimeout: 0,
      })
      .promise();
    const again = await v2.sqs.receiveMessage({ QueueUrl, WaitTimeSeconds: 5 }).promise();
    expect(again.Messages?.map((m) => m.Body)).toEqual([message?.Body]);
    const deleted = await v2.sqs
      .deleteMessageBatch({
        QueueUrl,
        Entries: [{ Id: 'only', ReceiptHandle: again.Messages?.[0]?.ReceiptHandle ?? '' }],
      })
      .promise();
    expect(deleted.Successful.map((s) => s.Id)).toEqual(['only']);

    await v2.sqs.sendMessage({ QueueUrl, MessageBody: 'to purge' }).promise();
    await v2.sqs.purgeQueue({ QueueUrl }).promise();
    const left = await v2.sqs
      .getQueueAttributes({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] })
      .promise();
    expect(left.Attributes?.ApproximateNumberOfMessages).toBe('0');
  });

  it('reports errors with the query protocol’s codes', async () => {
    const missing = await v2.sqs
      .getQueueUrl({ QueueName: uniqueName('missing') })
      .promise()
      .then(
        () => undefined,
        (error: AWS.AWSError) => error,
      );
    expect(missing?.code).toBe('AWS.SimpleQueueService.NonExistentQueue');
    expect(missing?.statusCode).toBe(400);
  });

  it('redrives a DLQ with StartMessageMoveTask and lists the finished task', async () => {
    const dlq = uniqueName('v2-dlq');
    const { QueueUrl: dlqUrl = '' } = await v2.sqs.createQueue({ QueueName: dlq }).promise();
    const dlqArn =
      (
        await v2.sqs
          .getQueueAttributes({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] })
          .promise()
      ).Attributes?.QueueArn ?? '';
    const { QueueUrl: sourceUrl = '' } = await v2.sqs
      .createQueue({
        QueueName: uniqueName('v2-src'),
        Attributes: {
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 1 }),
        },
      })
      .promise();
    await v2.sqs.sendMessage({ QueueUrl: dlqUrl, MessageBody: 'failed once' }).promise();
    const { TaskHandle } = await v2.sqs.startMessageMoveTask({ SourceArn: dlqArn }).promise();
    expect(TaskHandle).toEqual(expect.any(String));
    await waitFor(
      async () =>
        (await v2.sqs.listMessageMoveTasks({ SourceArn: dlqArn }).promise()).Results?.[0]
          ?.Status === 'COMPLETED',
      { timeoutMs: DEADLINE_MS, what: 'the move task to complete' },
    );
    const moved = await v2.sqs
      .receiveMessage({ QueueUrl: sourceUrl, WaitTimeSeconds: 5 })
      .promise();
    expect(moved.Messages?.map((m) => m.Body)).toEqual(['failed once']);
  });
});

describe('the AWS SDK for JavaScript v3', () => {
  it('lists the same queue URLs as v2, usable by clients that send to the queue URL itself', async () => {
    const sqs = new SQSClient({
      endpoint: runtime.endpoint,
      region: runtime.region,
      credentials: LOCAL_CREDENTIALS,
    });
    const { QueueUrls = [] } = await sqs.send(new ListQueuesCommand({}));
    expect(QueueUrls).toContain(output('OrdersQueueUrl'));
    // The URL names the edge's own address: it resolves on any machine, no DNS trick needed.
    expect(output('OrdersQueueUrl').startsWith(`${runtime.endpoint}/`)).toBe(true);
  });
});

reportMissingAwsCli('its SQS, DynamoDB and S3 test is');
const aws = (...args: string[]) => awsCli(runtime, '--output', 'json', ...args);

describe('the AWS CLI', () => {
  it.skipIf(!awsCliVersion)(
    'lists the queues, sends a batch that ingest applies, and reads the table and the bucket',
    async () => {
      const queues = await aws('sqs', 'list-queues');
      expect(queues.status, queues.stderr).toBe(0);
      expect(JSON.parse(queues.stdout).QueueUrls).toContain(output('OrdersQueueUrl'));
      const batchId = uniqueName('cli');
      const body = JSON.stringify({
        batchId,
        events: [
          {
            eventId: 'cli-1',
            orderId: `o-${batchId}`,
            customerId: 'c-\u{1F600}',
            status: 'placed',
            amount: '7.50',
            currency: 'EUR',
            eventTime: '2026-10-01T09:00:00Z',
          },
        ],
      });
      const sent = await aws(
        'sqs',
        'send-message',
        '--queue-url',
        output('OrdersQueueUrl'),
        '--message-body',
        body,
      );
      expect(sent.status, sent.stderr).toBe(0);
      await runtime.drain({ timeoutMs: DEADLINE_MS });
      const orders = await new DynamoOrderReader(
        runtime.clients.dynamo,
        output('TableName'),
      ).listOrders();
      expect(orders.find((o) => o.orderId === `o-${batchId}`)?.customerId).toBe('c-\u{1F600}');

      const scanned = await aws(
        'dynamodb',
        'scan',
        '--table-name',
        output('TableName'),
        '--select',
        'COUNT',
      );
      expect(scanned.status, scanned.stderr).toBe(0);
      expect(JSON.parse(scanned.stdout).Count).toBeGreaterThan(0);
      const objects = await aws(
        's3api',
        'list-objects-v2',
        '--bucket',
        output('BucketName'),
        '--prefix',
        'aggregates/hourly/',
      );
      expect(objects.status, objects.stderr).toBe(0);
      expect(JSON.parse(objects.stdout).Contents.length).toBeGreaterThan(0);
    },
  );
});
