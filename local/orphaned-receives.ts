/**
 * A long poll whose caller left (a poller stopped, a trigger deleted, an environment killed)
 * still takes messages in fauxqs, which does not cancel a receive when its connection closes:
 * they would stay invisible to every other receiver for the queue's whole visibility timeout (3
 * minutes for the stack's queues), each with one more receive counted towards its DLQ. The edge
 * lets such a receive run to its end and gives what it took back to the queue at once, as the
 * edge's comment on aborted long polls intends: stopping a poller never hides a message from the
 * next one.
 */
import * as v from 'valibot';
import { requestUpstream } from './http.ts';

const RequestSchema = v.object({ QueueUrl: v.string() });
const AnswerSchema = v.object({
  Messages: v.optional(v.array(v.object({ ReceiptHandle: v.string() })), []),
});

const parsed = <T extends v.GenericSchema>(schema: T, bytes: Buffer) => {
  try {
    const result = v.safeParse(schema, JSON.parse(bytes.toString('utf8')));
    return result.success ? result.output : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Makes the messages of an orphaned `ReceiveMessage` (its JSON request and answer) visible again,
 * with fauxqs' own `ChangeMessageVisibilityBatch`. An answer without messages, or one that is no
 * JSON (an error), needs nothing.
 */
export const releaseOrphaned = async (
  fauxqs: string,
  request: Buffer,
  answer: Buffer,
): Promise<void> => {
  const queue = parsed(RequestSchema, request);
  const messages = parsed(AnswerSchema, answer)?.Messages ?? [];
  if (!queue || messages.length === 0) return;
  await requestUpstream(fauxqs, {
    method: 'POST',
    path: '/',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'AmazonSQS.ChangeMessageVisibilityBatch',
    },
    body: JSON.stringify({
      QueueUrl: queue.QueueUrl,
      Entries: messages.map((m, i) => ({
        Id: String(i),
        ReceiptHandle: m.ReceiptHandle,
        VisibilityTimeout: 0,
      })),
    }),
  });
};
