import { CreateTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * The pipeline's table as the stack defines it ((pk, sk) strings, on demand), for tests,
 * benchmarks and chaos runs that need a fresh one without a whole stack. The local runtime
 * provisions from the template instead.
 */
export const createPipelineTable = async (
  dynamo: DynamoDBClient,
  name: string,
  hash = 'pk',
  range: string | null = 'sk',
) => {
  await dynamo.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: hash, AttributeType: 'S' },
        ...(range ? [{ AttributeName: range, AttributeType: 'S' as const }] : []),
      ],
      KeySchema: [
        { AttributeName: hash, KeyType: 'HASH' },
        ...(range ? [{ AttributeName: range, KeyType: 'RANGE' as const }] : []),
      ],
    }),
  );
};
