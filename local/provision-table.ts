/**
 * The local DynamoDB table of a template's `AWS::DynamoDB::Table`: its create input from the
 * resolved properties (validated, so a template the emulator cannot follow is named), and a
 * table kept from an earlier run reused only when its keys and indexes are the template's.
 */
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  type KeySchemaElement,
  ResourceInUseException,
} from '@aws-sdk/client-dynamodb';
import * as v from 'valibot';
import type { AwsClients } from '../adapters/clients.ts';

const KeySchemaSchema = v.array(
  v.object({ AttributeName: v.string(), KeyType: v.picklist(['HASH', 'RANGE']) }),
);
const IndexSchema = v.object({
  IndexName: v.string(),
  KeySchema: KeySchemaSchema,
  Projection: v.object({
    ProjectionType: v.optional(v.picklist(['ALL', 'KEYS_ONLY', 'INCLUDE'])),
    NonKeyAttributes: v.optional(v.array(v.string())),
  }),
});

/** What of an `AWS::DynamoDB::Table`'s resolved properties makes the local table. */
const TablePropertiesSchema = v.object({
  BillingMode: v.optional(v.picklist(['PROVISIONED', 'PAY_PER_REQUEST'])),
  AttributeDefinitions: v.array(
    v.object({ AttributeName: v.string(), AttributeType: v.picklist(['S', 'N', 'B']) }),
  ),
  KeySchema: KeySchemaSchema,
  GlobalSecondaryIndexes: v.optional(v.array(IndexSchema)),
  LocalSecondaryIndexes: v.optional(v.array(IndexSchema)),
});

export const tableInput = (
  logicalId: string,
  name: string,
  props: Record<string, unknown>,
): CreateTableCommandInput => {
  const parsed = v.safeParse(TablePropertiesSchema, props);
  if (!parsed.success) {
    const where = (issue: v.BaseIssue<unknown>) =>
      `${v.getDotPath(issue) ?? '(properties)'}: ${issue.message}`;
    throw new Error(
      `table ${logicalId} cannot be created locally: ${parsed.issues.map(where).join('; ')}`,
    );
  }
  const { BillingMode, AttributeDefinitions, KeySchema } = parsed.output;
  const provisioned = BillingMode === 'PROVISIONED';
  const throughput = { ReadCapacityUnits: 5, WriteCapacityUnits: 5 };
  const gsis = parsed.output.GlobalSecondaryIndexes?.map((g) => ({
    ...g,
    ...(provisioned ? { ProvisionedThroughput: throughput } : {}),
  }));
  const lsis = parsed.output.LocalSecondaryIndexes;
  return {
    TableName: name,
    AttributeDefinitions,
    KeySchema,
    BillingMode: provisioned ? 'PROVISIONED' : 'PAY_PER_REQUEST',
    ...(provisioned ? { ProvisionedThroughput: throughput } : {}),
    ...(gsis?.length ? { GlobalSecondaryIndexes: gsis } : {}),
    ...(lsis?.length ? { LocalSecondaryIndexes: lsis } : {}),
  };
};

/** The kept data was made by another version of the template: it cannot be reused as is. */
export class KeptDataMismatchError extends Error {
  override readonly name = 'KeptDataMismatchError';
}

const layoutOf = (t: {
  KeySchema?: KeySchemaElement[] | undefined;
  GlobalSecondaryIndexes?: { IndexName?: string | undefined }[] | undefined;
  LocalSecondaryIndexes?: { IndexName?: string | undefined }[] | undefined;
}) =>
  JSON.stringify({
    key: (t.KeySchema ?? []).map((k) => `${k.AttributeName}:${k.KeyType}`),
    indexes: [...(t.GlobalSecondaryIndexes ?? []), ...(t.LocalSecondaryIndexes ?? [])]
      .map((i) => i.IndexName)
      .sort(),
  });

/**
 * Creates the table, or keeps the one already there (a runtime with kept data) when its keys and
 * indexes are the template's. Returns whether it created it.
 */
export const createOrKeepTable = async (
  clients: AwsClients,
  input: CreateTableCommandInput,
): Promise<boolean> => {
  try {
    await clients.dynamo.send(new CreateTableCommand(input));
    return true;
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  const { Table } = await clients.dynamo.send(
    new DescribeTableCommand({ TableName: input.TableName }),
  );
  if (!Table || layoutOf(Table) !== layoutOf(input)) {
    throw new KeptDataMismatchError(
      `the kept table ${input.TableName} has keys and indexes ${layoutOf(Table ?? {})}, the template ${layoutOf(input)}: ` +
        'remove the kept data (the data directory) or run without --persist',
    );
  }
  return false;
};
