/**
 * What fauxqs lacks, probed for real at every start (a request that must fail or succeed, not a
 * belief about its version): each gap-filler of the edge steps aside once fauxqs answers the
 * feature itself.
 */
import * as v from 'valibot';
import { requestUpstream } from './http.ts';
import type { S3PreconditionGaps } from './s3-preconditions.ts';
import { receiveWholeGroups } from './sqs-fifo-receive.ts';
import { acceptSupplementaryCharacters } from './sqs-unicode.ts';

/** Which gap-fillers are needed (false: the emulator supports the feature itself). */
export interface FauxqsGaps {
  /** Which S3 conditional writes the edge emulates (false: the emulator honours it). */
  readonly s3Preconditions: S3PreconditionGaps;
  readonly moveTasks: boolean;
  /** Whether bodies with supplementary characters (emoji) are accepted, as SQS accepts them. */
  readonly supplementaryCharacters: boolean;
  /** Whether a FIFO receive returns several messages of one group, in order, as SQS does. */
  readonly fifoGroupReceives: boolean;
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

/** One SQS JSON-protocol call to the emulator. */
const callSqs = (fauxqs: string, action: string, body: unknown) =>
  requestUpstream(fauxqs, {
    method: 'POST',
    path: '/',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `AmazonSQS.${action}`,
    },
    body: JSON.stringify(body),
  });

/** Runs `probe` on a queue made for it (`attributes`), deleted after. */
const withProbeQueue = async <T>(
  fauxqs: string,
  name: string,
  attributes: Record<string, string>,
  probe: (queueUrl: string) => Promise<T>,
): Promise<T> => {
  const created = await callSqs(fauxqs, 'CreateQueue', { QueueName: name, Attributes: attributes });
  const { QueueUrl } = v.parse(v.object({ QueueUrl: v.string() }), JSON.parse(created.body));
  try {
    return await probe(QueueUrl);
  } finally {
    await callSqs(fauxqs, 'DeleteQueue', { QueueUrl });
  }
};

/** Does the emulator accept a body with an emoji, as SQS does? (A real send, not a belief.) */
const probeSupplementaryCharacters = (fauxqs: string): Promise<boolean> =>
  withProbeQueue(fauxqs, `onceflow-probe-${Date.now()}`, {}, async (QueueUrl) => {
    const sent = await callSqs(fauxqs, 'SendMessage', { QueueUrl, MessageBody: 'probe \u{1F4E6}' });
    return sent.status === 200;
  });

/** Does one FIFO receive return two messages of one group, as SQS does? (A real receive.) */
const probeFifoGroupReceives = (fauxqs: string): Promise<boolean> =>
  withProbeQueue(
    fauxqs,
    `onceflow-probe-${Date.now()}.fifo`,
    { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
    async (QueueUrl) => {
      for (const body of ['first', 'second'])
        await callSqs(fauxqs, 'SendMessage', { QueueUrl, MessageBody: body, MessageGroupId: 'g' });
      const received = await callSqs(fauxqs, 'ReceiveMessage', {
        QueueUrl,
        MaxNumberOfMessages: 10,
      });
      const { Messages = [] } = v.parse(
        v.object({ Messages: v.optional(v.array(v.object({ Body: v.string() }))) }),
        JSON.parse(received.body),
      );
      return Messages.map((m) => m.Body).join() === 'first,second';
    },
  );

/** Probes every gap of the fauxqs at this endpoint. */
export const probeFauxqsGaps = async (fauxqs: string): Promise<FauxqsGaps> => ({
  s3Preconditions: await probeS3Preconditions(fauxqs),
  moveTasks: await probeMoveTasks(fauxqs),
  supplementaryCharacters:
    (await acceptSupplementaryCharacters()) && (await probeSupplementaryCharacters(fauxqs)),
  fifoGroupReceives:
    (await probeFifoGroupReceives(fauxqs)) ||
    ((await receiveWholeGroups()) && (await probeFifoGroupReceives(fauxqs))),
});
