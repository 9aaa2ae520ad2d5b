/**
 * The deployed-pipeline suite against a stack deployed to LocalStack (or any endpoint):
 * `npm run test:localstack` (LOCALSTACK_ENDPOINT, default http://localhost:4566). Not part of `npm test`.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { beforeAll } from 'vitest';
import type { AwsClients } from '../../adapters/clients.ts';
import { drainQueues } from '../../local/drain.ts';
import { localstackEndpoint } from '../../localstack/env.ts';
import { deployedPipelineSuite } from '../deployed/suite.ts';

const endpoint = localstackEndpoint(process.env);
const stackName = process.env.ONCEFLOW_STACK ?? 'onceflow-dev';
const config = {
  endpoint,
  region: process.env.AWS_REGION ?? 'us-east-1',
  credentials: {
    accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? 'test',
    secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? 'test',
  },
};
const clients: AwsClients = {
  dynamo: new DynamoDBClient(config),
  s3: new S3Client({ ...config, forcePathStyle: true }),
  sqs: new SQSClient(config),
};
let outputs: Record<string, string> = {};

beforeAll(async () => {
  const out = await new CloudFormationClient(config).send(
    new DescribeStacksCommand({ StackName: stackName }),
  );
  outputs = Object.fromEntries(
    (out.Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey ?? '', o.OutputValue ?? '']),
  );
});

deployedPipelineSuite(`LocalStack at ${endpoint}, stack ${stackName}`, () => ({
  clients,
  outputs,
  drain: () =>
    drainQueues(clients.sqs, [outputs.OrdersQueueUrl ?? '', outputs.AggregateQueueUrl ?? ''], {
      timeoutMs: 120_000,
    }),
}));
