import { CreateTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * A table for the bench's baselines (the naive writer's state, Powertools' idempotency store):
 * their own layouts, not onceflow's. onceflow's table always comes from the template
 * (`local/stack-copy.ts`).
 */
export const createBaselineTable = async (
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
