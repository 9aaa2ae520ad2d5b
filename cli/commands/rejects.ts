import { GetObjectCommand } from '@aws-sdk/client-s3';
import { S3Store } from '../../adapters/s3.ts';
import { REJECT_PREFIX } from '../../shared/keys.ts';
import type { Target } from '../target.ts';

export interface RejectRecord {
  readonly key: string;
  readonly source: string;
  readonly sentAt: string;
  readonly reason: string;
  readonly detail: string;
  readonly messageId: string;
  readonly batchId?: string;
  readonly body: string;
}

export const listRejects = async (target: Target): Promise<RejectRecord[]> => {
  const bucket = target.output('BucketName');
  const keys = await new S3Store(target.clients.s3, bucket).listKeys(REJECT_PREFIX);
  return Promise.all(
    keys.map(async (key) => {
      const out = await target.clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      const record = JSON.parse((await out.Body?.transformToString()) ?? '{}') as Omit<
        RejectRecord,
        'key'
      >;
      return { key, ...record };
    }),
  );
};
