/**
 * CloudWatch in the Smithy RPC v2 CBOR protocol on the local edge: what the AWS CLI and botocore
 * speak to CloudWatch since 2025 (`POST /service/GraniteServiceVersion20100801/operation/<Action>`,
 * `smithy-protocol: rpc-v2-cbor`). The body decodes to the JSON protocol's input (timestamps,
 * CBOR tag 1, as epoch seconds), and the output encodes back with its timestamps tagged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { cbor, tag, tagSymbol } from '@smithy/core/cbor';
import { cloudWatchAction } from './cloudwatch-api.ts';
import { type CloudWatchBackend, CloudWatchError } from './cloudwatch-operation.ts';
import { readBodyBytes } from './http.ts';

const PATH = /^\/service\/GraniteServiceVersion20100801\/operation\/(\w+)$/;

/** The action a CBOR request to CloudWatch names, or undefined for another request. */
export const cborCloudWatchAction = (req: IncomingMessage): string | undefined =>
  req.headers['smithy-protocol'] === 'rpc-v2-cbor' ? PATH.exec(req.url ?? '')?.[1] : undefined;

const isTag = (value: object): value is { tag: number; value: unknown } =>
  tagSymbol in value && 'tag' in value && 'value' in value;

/** The decoded body as the JSON protocol's input: a timestamp's tag becomes its seconds. */
const untagged = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(untagged);
  if (typeof value !== 'object' || value === null) return value;
  if (isTag(value)) return value.tag === 1 ? value.value : untagged(value.value);
  return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, untagged(x)]));
};

/** The JSON protocol's output with each timestamp (epoch seconds) as CBOR tag 1. */
const tagged = (value: unknown, name = ''): unknown => {
  // `Timestamps` (GetMetricData's) is a list of them.
  if (Array.isArray(value))
    return value.map((item) => tagged(item, name === 'Timestamps' ? 'Timestamp' : name));
  if (typeof value === 'number' && name.endsWith('Timestamp')) return tag({ tag: 1, value });
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, tagged(x, k)]));
};

export const answerCloudWatchCbor = async (
  req: IncomingMessage,
  res: ServerResponse,
  action: string,
  cw: CloudWatchBackend,
): Promise<void> => {
  const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, {
      'content-type': 'application/cbor',
      'smithy-protocol': 'rpc-v2-cbor',
      ...headers,
    });
    res.end(Buffer.from(cbor.serialize(body)));
  };
  const fail = (error: CloudWatchError) =>
    send(
      error.status,
      { __type: `com.amazonaws.cloudwatch#${error.shape}`, message: error.message },
      { 'x-amzn-query-error': `${error.code};Sender` },
    );
  const bytes = await readBodyBytes(req);
  let input: unknown;
  try {
    input = bytes.length === 0 ? {} : untagged(cbor.deserialize(bytes));
  } catch {
    return fail(
      new CloudWatchError('InvalidFormatFault', 'InvalidFormat', 'the request body is not CBOR'),
    );
  }
  try {
    send(200, tagged(await cloudWatchAction(cw, action, input)));
  } catch (error) {
    if (!(error instanceof CloudWatchError)) throw error;
    fail(error);
  }
};
