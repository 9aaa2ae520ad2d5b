/**
 * `onceflow table check --table <name> [--fix]`: whether a table can serve the stack's
 * functions, first of all the table a point-in-time restore created. A restored table has the
 * source's key schema but neither its TTL nor its point-in-time recovery: `--fix` turns both on.
 */
import {
  DescribeContinuousBackupsCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  UpdateContinuousBackupsCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import type { Command } from 'commander';
import { TABLE_KEY, TTL_ATTRIBUTE } from '../../adapters/dynamo-items.ts';
import { run, target } from '../program.ts';
import { CliError, type Target } from '../target.ts';

export interface TableCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

const keyCheck = async (t: Target, table: string): Promise<TableCheck[]> => {
  const { Table } = await t.clients.dynamo.send(new DescribeTableCommand({ TableName: table }));
  const types = new Map(
    (Table?.AttributeDefinitions ?? []).map((a) => [a.AttributeName, a.AttributeType]),
  );
  const key = (Table?.KeySchema ?? []).map(
    (k) => `${k.AttributeName} ${k.KeyType} ${types.get(k.AttributeName)}`,
  );
  const want = [`${TABLE_KEY.partition} HASH S`, `${TABLE_KEY.sort} RANGE S`];
  return [
    { name: 'status', ok: Table?.TableStatus === 'ACTIVE', detail: `${Table?.TableStatus}` },
    {
      name: 'key schema',
      ok: JSON.stringify(key) === JSON.stringify(want),
      detail: key.join(', ') || '(none)',
    },
  ];
};

const ttlCheck = async (t: Target, table: string, fix: boolean): Promise<TableCheck> => {
  const describe = async () =>
    (await t.clients.dynamo.send(new DescribeTimeToLiveCommand({ TableName: table })))
      .TimeToLiveDescription;
  let ttl = await describe();
  const on = () =>
    ttl?.AttributeName === TTL_ATTRIBUTE &&
    (ttl.TimeToLiveStatus === 'ENABLED' || ttl.TimeToLiveStatus === 'ENABLING');
  if (!on() && fix) {
    await t.clients.dynamo.send(
      new UpdateTimeToLiveCommand({
        TableName: table,
        TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      }),
    );
    ttl = await describe();
  }
  return {
    name: `TTL on ${TTL_ATTRIBUTE}`,
    ok: on(),
    detail: `${ttl?.TimeToLiveStatus ?? 'unknown'}${ttl?.AttributeName ? ` (${ttl.AttributeName})` : ''}`,
  };
};

const pitrCheck = async (t: Target, table: string, fix: boolean): Promise<TableCheck> => {
  const name = 'point-in-time recovery';
  const describe = async () =>
    (await t.clients.dynamo.send(new DescribeContinuousBackupsCommand({ TableName: table })))
      .ContinuousBackupsDescription?.PointInTimeRecoveryDescription?.PointInTimeRecoveryStatus;
  let pitr: string | undefined;
  try {
    pitr = await describe();
  } catch (error) {
    // DynamoDB Local has no backups: nothing to check there.
    if ((error as Error).name === 'UnknownOperationException')
      return { name, ok: true, detail: 'not available on this endpoint (DynamoDB Local)' };
    throw error;
  }
  if (pitr !== 'ENABLED' && fix) {
    await t.clients.dynamo.send(
      new UpdateContinuousBackupsCommand({
        TableName: table,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      }),
    );
    pitr = await describe();
  }
  return { name, ok: pitr === 'ENABLED', detail: pitr ?? 'unknown' };
};

/** Every check of a table, fixing TTL and point-in-time recovery first when asked. */
export const checkTable = async (t: Target, table: string, fix: boolean): Promise<TableCheck[]> => [
  ...(await keyCheck(t, table)),
  await ttlCheck(t, table, fix),
  await pitrCheck(t, table, fix),
];

export const register = (program: Command): void => {
  program
    .command('table')
    .description('DynamoDB table checks')
    .command('check')
    .description(
      'whether a table can serve the functions (key schema, TTL, point-in-time recovery): run it on a restored table before pointing the stack at it',
    )
    .requiredOption('--table <name>', 'the table, e.g. the one a point-in-time restore created')
    .option('--fix', 'turn on the TTL and point-in-time recovery a restored table lacks')
    .addHelpText(
      'after',
      '\nExample:\n  npx onceflow table check --target aws --table onceflow-dev-restored --fix',
    )
    .action(
      run(async (o: { table: string; fix?: boolean }) => {
        const t = await target();
        let checks: TableCheck[];
        try {
          checks = await checkTable(t, o.table, o.fix === true);
        } catch (error) {
          if ((error as Error).name === 'ResourceNotFoundException')
            throw new CliError(`table ${o.table} does not exist`, { cause: error });
          throw error;
        }
        for (const c of checks) console.log(`${c.ok ? '✓' : '✗'} ${c.name}: ${c.detail}`);
        const ok = checks.every((c) => c.ok);
        console.log(
          ok ? `${o.table} can serve the stack` : `${o.table} cannot serve the stack yet`,
        );
        return ok ? 0 : 1;
      }),
    );
};
