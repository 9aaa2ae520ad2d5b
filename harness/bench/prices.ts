/**
 * AWS list prices in us-east-1, each written once, with the day they were read; `npm run bench`
 * turns the units it measures into dollars with them. On-demand and standard classes, free tiers
 * ignored.
 */
export const PRICES = {
  source:
    'AWS pricing pages, us-east-1: aws.amazon.com/dynamodb/pricing/on-demand, aws.amazon.com/s3/pricing, aws.amazon.com/sqs/pricing, aws.amazon.com/lambda/pricing',
  readOn: '2026-12-01',
  region: 'us-east-1',
  /** DynamoDB on-demand, per write request unit ($0.625 per million). */
  dynamoWriteRequestUnit: 0.625 / 1e6,
  /** DynamoDB on-demand, per read request unit ($0.125 per million). */
  dynamoReadRequestUnit: 0.125 / 1e6,
  /** S3 Standard PUT, COPY, POST and LIST requests ($0.005 per 1,000). */
  s3PutRequest: 0.005 / 1000,
  /** S3 Standard GET and all other requests ($0.0004 per 1,000); DELETE is free. */
  s3GetRequest: 0.0004 / 1000,
  /** SQS standard queue requests, each 64 KB chunk of payload one request ($0.40 per million). */
  sqsRequest: 0.4 / 1e6,
  /** SQS FIFO queue requests, in the same 64 KB chunks ($0.50 per million). */
  sqsFifoRequest: 0.5 / 1e6,
  /** Lambda requests ($0.20 per million). */
  lambdaRequest: 0.2 / 1e6,
  /** Lambda duration on Arm, per GB-second (first pricing tier); init billed as duration. */
  lambdaArmGbSecond: 0.0000133334,
  /** The monthly items the README's estimate adds (not per event): CloudWatch and storage. */
  cloudWatchAlarmMonth: 0.1,
  cloudWatchDashboardMonth: 3,
  cloudWatchCustomMetricMonth: 0.3,
  cloudWatchLogsIngestedGb: 0.5,
  s3StandardGbMonth: 0.023,
  dynamoStorageGbMonth: 0.25,
  dynamoPitrGbMonth: 0.2,
  kmsKeyMonth: 1,
} as const;

export interface BilledUnits {
  readonly writeUnits: number;
  readonly readUnits: number;
  readonly s3PutRequests: number;
  readonly s3GetRequests: number;
  /** Every SQS request (64 KB chunks), standard and FIFO. */
  readonly sqsRequests: number;
  /** Of them, to FIFO queues. */
  readonly sqsFifoRequests: number;
  readonly lambdaInvocations: number;
  readonly lambdaGbSeconds: number;
}

/** What the units cost, by service and in total (USD). */
export const dollarsOf = (u: BilledUnits) => {
  const dynamodb =
    u.writeUnits * PRICES.dynamoWriteRequestUnit + u.readUnits * PRICES.dynamoReadRequestUnit;
  const s3 = u.s3PutRequests * PRICES.s3PutRequest + u.s3GetRequests * PRICES.s3GetRequest;
  const sqs =
    (u.sqsRequests - u.sqsFifoRequests) * PRICES.sqsRequest +
    u.sqsFifoRequests * PRICES.sqsFifoRequest;
  const lambda =
    u.lambdaInvocations * PRICES.lambdaRequest + u.lambdaGbSeconds * PRICES.lambdaArmGbSecond;
  return { dynamodb, s3, sqs, lambda, total: dynamodb + s3 + sqs + lambda };
};
