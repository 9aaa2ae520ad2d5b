/** Clients for the local edge, signed with the local credentials: for admin work and tests. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { AwsClients } from '../adapters/clients.ts';
import { LOCAL_CREDENTIALS } from './emulators.ts';

/** The product's clients, and SNS's for the topics the local runtime creates. */
export type AdminClients = AwsClients & { readonly sns: SNSClient };

export const adminClients = (endpoint: string, region: string): AdminClients => {
  const config = { endpoint, region, credentials: LOCAL_CREDENTIALS };
  return {
    dynamo: new DynamoDBClient(config),
    s3: new S3Client({ ...config, forcePathStyle: true }),
    sqs: new SQSClient(config),
    sns: new SNSClient(config),
  };
};
