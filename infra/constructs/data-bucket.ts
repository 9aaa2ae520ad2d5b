import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  ObjectOwnership,
  StorageClass,
} from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

export interface DataBucketProps {
  /** Keep the bucket (and its data) when the stack is deleted. */
  readonly retain: boolean;
  /** Days before quarantined messages expire. */
  readonly rejectRetentionDays: number;
  /** Days before the raw archive moves to Infrequent Access. Default 30 (the S3 minimum). */
  readonly rawToInfrequentAccessDays?: number;
}

/** Hour objects, the raw archive and the quarantine: private, encrypted, TLS-only. */
export class DataBucket extends Construct {
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: DataBucketProps) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: props.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      autoDeleteObjects: !props.retain,
      lifecycleRules: [
        {
          id: 'raw-to-infrequent-access',
          prefix: 'raw/',
          transitions: [
            {
              storageClass: StorageClass.INFREQUENT_ACCESS,
              transitionAfter: Duration.days(props.rawToInfrequentAccessDays ?? 30),
            },
          ],
        },
        {
          id: 'rejects-expire',
          prefix: 'rejects/',
          expiration: Duration.days(props.rejectRetentionDays),
        },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });
  }
}
