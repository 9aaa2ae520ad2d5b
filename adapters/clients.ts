/**
 * AWS clients, created once per process and shared by the adapters. The endpoint comes from
 * configuration (LocalStack, the local runtime) or, when absent, from the SDK's defaults (AWS).
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

export const createAwsClients = (aws: AwsConfig): AwsClients => {
  const common = {
    ...(aws.region === undefined ? {} : { region: aws.region }),
    ...(aws.endpoint === undefined ? {} : { endpoint: aws.endpoint }),
  };
  return {
    dynamo: new DynamoDBClient(common),
    s3: new S3Client({ ...common, forcePathStyle: aws.s3ForcePathStyle }),
    sqs: new SQSClient(common),
  };
};
