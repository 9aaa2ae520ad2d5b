/**
 * What fauxqs lacks, probed for real at every start (a request that must fail or succeed, not a
 * belief about its version): each gap-filler of the edge steps aside once fauxqs answers the
 * feature itself.
 */
import * as v from 'valibot';
import { requestUpstream } from './http.ts';
import type { S3PreconditionGaps } from './s3-preconditions.ts';
import { acceptSupplementaryCharacters } from './sqs-unicode.ts';

/** Which gap-fillers are needed (false: the emulator supports the feature itself). */
export interface FauxqsGaps {
  /** Which S3 conditional writes the edge emulates (false: the emulator honours it). */
  readonly s3Preconditions: S3PreconditionGaps;
  readonly moveTasks: boolean;
  /** Whether bodies with supplementary characters (emoji) are accepted, as SQS accepts them. */
  readonly supplementaryCharacters: boolean;
}

/**
 * Which of S3's conditional writes the emulator ignores, each probed on its own: a condition
 * that must fail, sent for real (true: ignored, so the edge emulates it).
 */
const probeS3Preconditions = async (fauxqs: string): Promise<S3PreconditionGaps> => {
  const bucket = `onceflow-probe-${Date.now()}`;
  const host = { host: new URL(fauxqs).host };
  const call = (method: string, key: string, headers: Record<string, string> = {}) =>
    requestUpstream(fauxqs, {
      method,
      path: `/${bucket}${key}`,
      headers: { ...host, ...headers },
      ...(method === 'PUT' && key ? { body: 'x' } : {}),
    });
  const stale = '"00000000000000000000000000000000"';
  await call('PUT', '');
  await call('PUT', '/probe');
  const gaps = {
    putIfNoneMatch: (await call('PUT', '/probe', { 'if-none-match': '*' })).status !== 412,
    putIfMatch: (await call('PUT', '/probe', { 'if-match': stale })).status !== 412,
    deleteIfMatch: (await call('DELETE', '/probe', { 'if-match': stale })).status !== 412,
  };
  await call('DELETE', '/probe');
  await call('DELETE', '');
  return gaps;
};

/** Does the emulator know StartMessageMoveTask? (An unknown action answers InvalidAction.) */
const probeMoveTasks = async (fauxqs: string): Promise<boolean> => {
  const answer = await requestUpstream(fauxqs, {
    method: 'POST',
    path: '/',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'AmazonSQS.ListMessageMoveTasks',
    },
    body: JSON.stringify({ SourceArn: 'arn:aws:sqs:us-east-1:000000000000:onceflow-probe' }),
  });
  return answer.body.includes('InvalidAction') || answer.body.includes('Unknown action');
};

/** Does the emulator accept a body with an emoji, as SQS does? (A real send, not a belief.) */
const probeSupplementaryCharacters = async (fauxqs: string): Promise<boolean> => {
  const call = (action: string, body: unknown) =>
    requestUpstream(fauxqs, {
      method: 'POST',
      path: '/',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `AmazonSQS.${action}`,
      },
      body: JSON.stringify(body),
    });
  const created = await call('CreateQueue', { QueueName: `onceflow-probe-${Date.now()}` });
  const { QueueUrl } = v.parse(v.object({ QueueUrl: v.string() }), JSON.parse(created.body));
  const sent = await call('SendMessage', { QueueUrl, MessageBody: 'probe \u{1F4E6}' });
  await call('DeleteQueue', { QueueUrl });
  return sent.status === 200;
};

/** Probes every gap of the fauxqs at this endpoint. */
export const probeFauxqsGaps = async (fauxqs: string): Promise<FauxqsGaps> => ({
  s3Preconditions: await probeS3Preconditions(fauxqs),
  moveTasks: await probeMoveTasks(fauxqs),
  supplementaryCharacters:
    (await acceptSupplementaryCharacters()) && (await probeSupplementaryCharacters(fauxqs)),
});
