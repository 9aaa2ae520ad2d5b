/** `onceflow rejects`: the quarantine. */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import Table from 'cli-table3';
import type { Command } from 'commander';
import { S3Store } from '../../adapters/s3.ts';
import { REJECT_PREFIX } from '../../shared/keys.ts';
import { json, run, target } from '../program.ts';
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

export const register = (program: Command): void => {
  program
    .command('rejects')
    .description('the quarantined messages and why')
    .option('--json', 'print JSON, raw bodies included')
    .addHelpText('after', '\nExample:\n  npx onceflow rejects')
    .action(
      run(async (o: { json?: boolean }) => {
        const rejects = await listRejects(await target());
        if (o.json) {
          json(rejects);
          return 0;
        }
        const table = new Table({
          head: ['sent', 'from', 'reason', 'batch', 'message id', 'detail'],
          style: { head: [], border: [], compact: true },
          colWidths: [null, null, null, null, null, 60],
          wordWrap: true,
        });
        for (const r of rejects)
          table.push([r.sentAt, r.source, r.reason, r.batchId ?? '', r.messageId, r.detail]);
        console.log(`${table.toString()}\n${rejects.length} quarantined`);
        return 0;
      }),
    );
};
