import { Stack } from 'aws-cdk-lib';
import { CfnDatabase, CfnTable } from 'aws-cdk-lib/aws-glue';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

export interface HourlyTableProps {
  readonly bucket: IBucket;
  /** Where the hour objects live: `<prefix>date=YYYY-MM-DD/hour=HH.json`. */
  readonly prefix: string;
  /** The Glue database. Default: the stack name, lowercased, other characters as `_`. */
  readonly databaseName?: string;
  /** Default `onceflow_hourly`. */
  readonly tableName?: string;
  /** The first date the partition projection covers (the last is always today). Default 2020-01-01. */
  readonly firstDate?: string;
}

/**
 * The hour objects' columns in Hive types, as the OpenX JSON SerDe reads them (keys matched
 * without regard to case, so `byStatus` fills `bystatus`). Lifecycle columns are null while an
 * hour is open.
 */
export const HOURLY_COLUMNS: readonly CfnTable.ColumnProperty[] = [
  { name: 'hour', type: 'string', comment: 'the UTC hour, 2026-10-01T09:00:00Z' },
  { name: 'events', type: 'bigint' },
  {
    name: 'bystatus',
    type: 'map<string,struct<events:bigint,amounts:map<string,string>>>',
    comment: 'per status: events and exact decimal amounts per currency',
  },
  { name: 'revision', type: 'bigint', comment: 'grows with every commit that touched the hour' },
  { name: 'computedat', type: 'string' },
  { name: 'final', type: 'boolean', comment: 'true once the hour is final' },
  { name: 'finalizedat', type: 'string' },
  { name: 'amendments', type: 'int', comment: 'changes after final (late data)' },
  { name: 'amendedat', type: 'string' },
];

/**
 * A Glue database and table over the hour objects, partitioned by date with partition
 * projection: Athena finds each day's objects from the path template, so no crawler and no
 * `MSCK REPAIR` is ever needed, and the day indexes under `_final/` are outside every partition.
 */
export class HourlyTable extends Construct {
  readonly databaseName: string;
  readonly tableName: string;

  constructor(scope: Construct, id: string, props: HourlyTableProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.databaseName =
      props.databaseName ?? stack.stackName.toLowerCase().replace(/[^a-z0-9_]/g, '_');
    this.tableName = props.tableName ?? 'onceflow_hourly';
    const database = new CfnDatabase(this, 'Database', {
      catalogId: stack.account,
      databaseInput: {
        name: this.databaseName,
        description: 'onceflow: hourly aggregates in S3',
      },
    });
    const location = `s3://${props.bucket.bucketName}/${props.prefix}`;
    const table = new CfnTable(this, 'Table', {
      catalogId: stack.account,
      databaseName: this.databaseName,
      tableInput: {
        name: this.tableName,
        description: 'One row per published hour object (one JSON document per object)',
        tableType: 'EXTERNAL_TABLE',
        parameters: {
          classification: 'json',
          'projection.enabled': 'true',
          'projection.date.type': 'date',
          'projection.date.format': 'yyyy-MM-dd',
          'projection.date.range': `${props.firstDate ?? '2020-01-01'},NOW`,
          'projection.date.interval': '1',
          'projection.date.interval.unit': 'DAYS',
          'storage.location.template': `${location}date=\${date}/`,
        },
        partitionKeys: [{ name: 'date', type: 'string' }],
        storageDescriptor: {
          columns: [...HOURLY_COLUMNS],
          location,
          inputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
          outputFormat: 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat',
          serdeInfo: {
            serializationLibrary: 'org.openx.data.jsonserde.JsonSerDe',
            parameters: { 'case.insensitive': 'TRUE' },
          },
        },
      },
    });
    table.addResourceDependency(database);
  }
}
