import { RemovalPolicy } from 'aws-cdk-lib';
import {
  AttributeType,
  Billing,
  ProjectionType,
  TableEncryptionV2,
  TableV2,
} from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';

export interface OrderTableProps {
  /** Protects the table from deletion and keeps it when the stack goes. */
  readonly protect: boolean;
}

/** The single table: batch ledger, orders and hourly counters, keyed (pk, sk). */
export class OrderTable extends Construct {
  /** The TTL attribute used when a ledger retention is configured. */
  static readonly TTL_ATTRIBUTE = 'expiresAt';
  /** The key: both strings (the item layout's, `adapters/dynamo-items.ts`; a test holds them equal). */
  static readonly PARTITION_KEY = 'pk';
  static readonly SORT_KEY = 'sk';
  /**
   * The sparse index of pending batches (`adapters/dynamo-items.ts` names the same; a test holds
   * them equal): only ledger entries between their claim and their last commit carry its key, so
   * `onceflow status` reads the batches in progress without scanning the ledger.
   */
  static readonly PENDING_INDEX = {
    name: 'PendingBatches',
    partitionKey: 'pendingShard',
    sortKey: 'receivedAt',
    projected: ['batchId', 'archiveKey'],
  } as const;
  /**
   * The index of orders by customer (keys only): `onceflow orders --customer` queries it, and
   * `onceflow orders` pages through it instead of scanning the table. Only order items carry
   * its key, and their keys never change, so it costs one write per order, when the order is
   * first seen.
   */
  static readonly CUSTOMER_INDEX = {
    name: 'OrdersByCustomer',
    partitionKey: 'customerId',
    sortKey: 'orderId',
  } as const;
  readonly table: TableV2;

  constructor(scope: Construct, id: string, props: OrderTableProps) {
    super(scope, id);
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: OrderTable.PARTITION_KEY, type: AttributeType.STRING },
      sortKey: { name: OrderTable.SORT_KEY, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      encryption: TableEncryptionV2.awsManagedKey(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: OrderTable.TTL_ATTRIBUTE,
      deletionProtection: props.protect,
      removalPolicy: props.protect ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      globalSecondaryIndexes: [
        {
          indexName: OrderTable.PENDING_INDEX.name,
          partitionKey: {
            name: OrderTable.PENDING_INDEX.partitionKey,
            type: AttributeType.STRING,
          },
          sortKey: { name: OrderTable.PENDING_INDEX.sortKey, type: AttributeType.NUMBER },
          projectionType: ProjectionType.INCLUDE,
          nonKeyAttributes: [...OrderTable.PENDING_INDEX.projected],
        },
        {
          indexName: OrderTable.CUSTOMER_INDEX.name,
          partitionKey: {
            name: OrderTable.CUSTOMER_INDEX.partitionKey,
            type: AttributeType.STRING,
          },
          sortKey: { name: OrderTable.CUSTOMER_INDEX.sortKey, type: AttributeType.STRING },
          projectionType: ProjectionType.KEYS_ONLY,
        },
      ],
    });
  }
}
