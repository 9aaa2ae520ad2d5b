import { Duration } from 'aws-cdk-lib';
import {
  DeduplicationScope,
  FifoThroughputLimit,
  Queue,
  QueueEncryption,
  type QueueProps,
} from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface QueueWithDlqProps {
  /** Visibility timeout of the source queue. */
  readonly visibilityTimeout: Duration;
  /** Receives before a message moves to the DLQ. Default 5. */
  readonly maxReceiveCount?: number;
  /** Source queue retention. Default 4 days. */
  readonly retentionPeriod?: Duration;
  /** DLQ retention; must exceed the source's. Default 14 days (the SQS maximum). */
  readonly dlqRetentionPeriod?: Duration;
  /**
   * Largest message body, for the queue and its DLQ (a redriven message must fit back).
   * Default 1 MiB, the SQS maximum and the ingest function's MAX_BODY_BYTES default.
   */
  readonly maxMessageSizeBytes?: number;
  /**
   * A FIFO queue (and DLQ) with high throughput: deduplication and throughput per message
   * group. Default false.
   */
  readonly fifo?: boolean;
  /** How long each message stays invisible after it is sent. Default none. */
  readonly deliveryDelay?: Duration;
}

/** A queue and its dead-letter queue: SSE, TLS-only, a redrive policy, a DLQ that outlives it. */
export class QueueWithDlq extends Construct {
  readonly queue: Queue;
  readonly dlq: Queue;
  readonly maxReceiveCount: number;
  readonly visibilityTimeout: Duration;
  readonly maxMessageSizeBytes: number;
  readonly fifo: boolean;

  constructor(scope: Construct, id: string, props: QueueWithDlqProps) {
    super(scope, id);
    const retention = props.retentionPeriod ?? Duration.days(4);
    const dlqRetention = props.dlqRetentionPeriod ?? Duration.days(14);
    // A message redriven from the DLQ keeps its original enqueue time on AWS: the DLQ must
    // keep messages longer than the source, or they expire there before anyone can redrive.
    if (dlqRetention.toSeconds() <= retention.toSeconds()) {
      throw new Error(
        `${id}: DLQ retention (${dlqRetention.toHumanString()}) must exceed the queue's (${retention.toHumanString()})`,
      );
    }
    this.maxReceiveCount = props.maxReceiveCount ?? 5;
    const maxMessageSizeBytes = props.maxMessageSizeBytes ?? 1_048_576;
    this.maxMessageSizeBytes = maxMessageSizeBytes;
    this.visibilityTimeout = props.visibilityTimeout;
    this.fifo = props.fifo ?? false;
    const fifo: Partial<QueueProps> = this.fifo ? { fifo: true } : {};
    this.dlq = new Queue(this, 'Dlq', {
      ...fifo,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: dlqRetention,
      maxMessageSizeBytes,
    });
    this.queue = new Queue(this, 'Queue', {
      ...(this.fifo
        ? {
            fifo: true,
            deduplicationScope: DeduplicationScope.MESSAGE_GROUP,
            fifoThroughputLimit: FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
          }
        : {}),
      ...(props.deliveryDelay ? { deliveryDelay: props.deliveryDelay } : {}),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: retention,
      visibilityTimeout: props.visibilityTimeout,
      maxMessageSizeBytes,
      deadLetterQueue: { queue: this.dlq, maxReceiveCount: this.maxReceiveCount },
    });
  }
}
