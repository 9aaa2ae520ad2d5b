import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { HeadBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { ListTopicsCommand } from '@aws-sdk/client-sns';
import { GetQueueUrlCommand } from '@aws-sdk/client-sqs';
import { describe, expect, inject, it } from 'vitest';
import { adminClients } from '../../local/clients.ts';
import { deprovisionStack } from '../../local/deprovision.ts';
import { LOCAL_REGION } from '../../local/emulators.ts';
import { type ProvisionedStack, provisionStack } from '../../local/provision.ts';
import { mapLimit } from '../../shared/concurrency.ts';
import { uniqueName } from '../support/names.ts';

/** A stack of every kind the provisioner makes: queues (one FIFO), a table, a bucket, a topic. */
const template = {
  Resources: {
    Dead: { Type: 'AWS::SQS::Queue', Metadata: {}, Properties: {} },
    Work: {
      Type: 'AWS::SQS::Queue',
      Metadata: {},
      Properties: {
        RedrivePolicy: {
          deadLetterTargetArn: { 'Fn::GetAtt': ['Dead', 'Arn'] },
          maxReceiveCount: 3,
        },
      },
    },
    Ordered: { Type: 'AWS::SQS::Queue', Metadata: {}, Properties: { FifoQueue: true } },
    Things: {
      Type: 'AWS::DynamoDB::Table',
      Metadata: {},
      Properties: {
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      },
    },
    Files: { Type: 'AWS::S3::Bucket', Metadata: {}, Properties: {} },
    Alerts: { Type: 'AWS::SNS::Topic', Metadata: {}, Properties: {} },
    ToWork: {
      Type: 'AWS::SNS::Subscription',
      Metadata: {},
      Properties: {
        TopicArn: { Ref: 'Alerts' },
        Protocol: 'sqs',
        Endpoint: { 'Fn::GetAtt': ['Work', 'Arn'] },
      },
    },
  },
  Outputs: {},
};

describe('deprovisioning a stack', () => {
  const clients = () => adminClients(inject('endpoint'), LOCAL_REGION);
  const provision = (c: ReturnType<typeof clients>) =>
    provisionStack(
      { stackName: uniqueName('deprov'), assemblyDir: '.', template },
      c,
      LOCAL_REGION,
    );

  /** Which of the stack's resources the emulators still have. */
  const remaining = async (c: ReturnType<typeof clients>, stack: ProvisionedStack) => {
    const exists = (request: Promise<unknown>) =>
      request.then(
        () => true,
        (e: unknown) => {
          if (e instanceof Error && /NotFound|QueueDoesNotExist|NoSuchBucket/.test(e.name))
            return false;
          throw e;
        },
      );
    const { Topics = [] } = await c.sns.send(new ListTopicsCommand({}));
    const topics = new Set(Topics.map((t) => t.TopicArn));
    return [
      ...(await Promise.all(
        stack.queues.map(async (q) =>
          (await exists(c.sqs.send(new GetQueueUrlCommand({ QueueName: q.name })))) ? [q.name] : [],
        ),
      )),
      ...(await Promise.all(
        stack.tables.map(async (t) =>
          (await exists(c.dynamo.send(new DescribeTableCommand({ TableName: t.name }))))
            ? [t.name]
            : [],
        ),
      )),
      ...(await Promise.all(
        stack.buckets.map(async (b) =>
          (await exists(c.s3.send(new HeadBucketCommand({ Bucket: b.name })))) ? [b.name] : [],
        ),
      )),
      stack.topicArns.filter((arn) => topics.has(arn)),
    ].flat();
  };

  it('deletes every queue, table, bucket and topic it made, and nothing of another stack', async () => {
    const c = clients();
    const [gone, kept] = [await provision(c), await provision(c)];
    expect(gone.topicArns).toHaveLength(1);
    // More objects than one listing page holds (1,000), so emptying the bucket takes two.
    const bucket = gone.buckets[0]?.name ?? '';
    await mapLimit(
      Array.from({ length: 1_005 }, (_, i) => i),
      16,
      (i) => c.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `k/${i}`, Body: 'x' })),
    );
    const all = await remaining(c, gone);
    expect(all).toHaveLength(6);

    await deprovisionStack(gone, c);

    expect(await remaining(c, gone)).toEqual([]);
    expect(await remaining(c, kept)).toHaveLength(6);
    await deprovisionStack(kept, c);
    expect(await remaining(c, kept)).toEqual([]);
    for (const client of Object.values(c)) client.destroy();
  });
});
