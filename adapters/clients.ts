/**
 * AWS clients, created once per process and shared by the adapters. The endpoint comes from
 * configuration (LocalStack, the local runtime) or, when absent, from the SDK's defaults (AWS).
 * One factory per service, so that a function bundles and loads only the clients it uses.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { AwsConfig } from '../shared/config.ts';

export interface AwsClients {
  readonly dynamo: DynamoDBClient;
  readonly s3: S3Client;
  readonly sqs: SQSClient;
}

const common = (aws: AwsConfig) => ({
  ...(aws.region === undefined ? {} : { region: aws.region }),
  ...(aws.endpoint === undefined ? {} : { endpoint: aws.endpoint }),
});

export const createDynamoClient = (aws: AwsConfig) => new DynamoDBClient(common(aws));
export const createS3Client = (aws: AwsConfig) =>
  new S3Client({ ...common(aws), forcePathStyle: aws.s3ForcePathStyle });
export const createSqsClient = (aws: AwsConfig) => new SQSClient(common(aws));

export const createAwsClients = (aws: AwsConfig): AwsClients => ({
  dynamo: createDynamoClient(aws),
  s3: createS3Client(aws),
  sqs: createSqsClient(aws),
});
