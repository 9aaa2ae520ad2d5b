/**
 * SQS's query protocol, translated at the edge. fauxqs speaks only SQS's JSON protocol; the AWS
 * CLI before 2.13, the AWS SDK for Java v1 and the AWS SDK for JavaScript v2 before 2.1491 send
 * form-encoded requests (`Action=SendMessage&QueueUrl=…`) and expect XML back. This turns such a
 * request into its JSON form, sends it to the edge itself (so the gap-fillers and the fault hooks
 * see it like any other call), and turns the JSON answer, or error, into the XML the query
 * protocol returns.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as v from 'valibot';
import { requestUpstream } from './http.ts';
import { releaseOrphaned } from './orphaned-receives.ts';

/** Every action of the SQS API (2012-11-05): a form request naming one of them is SQS's. */
export const SQS_QUERY_ACTIONS: ReadonlySet<string> = new Set([
  'AddPermission',
  'CancelMessageMoveTask',
  'ChangeMessageVisibility',
  'ChangeMessageVisibilityBatch',
  'CreateQueue',
  'DeleteMessage',
  'DeleteMessageBatch',
  'DeleteQueue',
  'GetQueueAttributes',
  'GetQueueUrl',
  'ListDeadLetterSourceQueues',
  'ListMessageMoveTasks',
  'ListQueueTags',
  'ListQueues',
  'PurgeQueue',
  'ReceiveMessage',
  'RemovePermission',
  'SendMessage',
  'SendMessageBatch',
  'SetQueueAttributes',
  'StartMessageMoveTask',
  'TagQueue',
  'UntagQueue',
]);

const NAMESPACE = 'http://queue.amazonaws.com/doc/2012-11-05/';

/** Members the JSON protocol types as integers (the query protocol sends every value as text). */
const INTEGERS = new Set([
  'DelaySeconds',
  'MaxNumberOfMessages',
  'MaxNumberOfMessagesPerSecond',
  'MaxResults',
  'VisibilityTimeout',
  'WaitTimeSeconds',
]);

/** Flattened list members and their JSON names. */
const LISTS: Record<string, string> = {
  AttributeName: 'AttributeNames',
  MessageAttributeName: 'MessageAttributeNames',
  MessageSystemAttributeName: 'MessageSystemAttributeNames',
  TagKey: 'TagKeys',
  AWSAccountId: 'AWSAccountIds',
  ActionName: 'Actions',
};

type Tree = { [key: string]: Tree | string };

/**
 * A node without a prototype: the request names its keys, and in a plain object a key such as
 * `__proto__` would reach Object.prototype itself (`A.__proto__.B=x` would give every object of
 * the process a `B`). Here it is a key like any other.
 */
const branch = (): Tree => Object.create(null);

/** `A.1.B=x&A.2.B=y` → `{ A: { 1: { B: 'x' }, 2: { B: 'y' } } }`. */
const nest = (params: URLSearchParams): Tree => {
  const root = branch();
  for (const [key, value] of params) {
    const path = key.split('.');
    let node = root;
    for (const [i, part] of path.entries()) {
      if (i === path.length - 1) node[part] = value;
      else {
        const next = node[part];
        const child = typeof next === 'object' ? next : branch();
        node[part] = child;
        node = child;
      }
    }
  }
  return root;
};

/** The members of a flattened list, in index order. */
const members = (node: Tree | string | undefined): (Tree | string)[] =>
  typeof node === 'object'
    ? Object.keys(node)
        .filter((k) => /^\d+$/.test(k))
        .sort((a, b) => Number(a) - Number(b))
        .map((k) => node[k] as Tree | string)
    : [];

const text = (node: Tree | string | undefined): string | undefined =>
  typeof node === 'string' ? node : undefined;

const attributeValue = (node: Tree | string) => {
  const value = typeof node === 'object' ? node : {};
  return Object.fromEntries(
    ['DataType', 'StringValue', 'BinaryValue']
      .map((k) => [k, text(value[k])])
      .filter(([, v]) => v !== undefined),
  );
};

/** One request's (or batch entry's) members in their JSON shape. */
const toJson = (tree: Tree, action: string): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const [key, node] of Object.entries(tree)) {
    if (key === 'Action' || key === 'Version') continue;
    const list = LISTS[key];
    if (list) out[list] = members(node).map((m) => text(m) ?? '');
    else if (key === 'Attribute' || key === 'Tag') {
      const [k, v] = key === 'Tag' ? ['Key', 'Value'] : ['Name', 'Value'];
      const map = Object.fromEntries(
        members(node).map((m) => [
          text((m as Tree)[k as string]) ?? '',
          text((m as Tree)[v as string]) ?? '',
        ]),
      );
      // CreateQueue's tags are `tags` in the JSON protocol; TagQueue's are `Tags`.
      out[key === 'Attribute' ? 'Attributes' : action === 'CreateQueue' ? 'tags' : 'Tags'] = map;
    } else if (key === 'MessageAttribute' || key === 'MessageSystemAttribute') {
      out[`${key}s`] = Object.fromEntries(
        members(node).map((m) => [
          text((m as Tree).Name) ?? '',
          attributeValue((m as Tree).Value ?? {}),
        ]),
      );
    } else if (key.endsWith('BatchRequestEntry'))
      out.Entries = members(node).map((m) => toJson(m as Tree, action));
    else if (typeof node === 'string') out[key] = INTEGERS.has(key) ? Number(node) : node;
  }
  return out;
};

/** The JSON request a query-protocol request stands for. */
export const queryToJson = (
  params: URLSearchParams,
  path: string,
  host: string,
): { action: string; body: Record<string, unknown> } => {
  const action = params.get('Action') ?? '';
  const body = toJson(nest(params), action);
  // Query clients may address the queue by the request's path instead of a QueueUrl member.
  const queuePath = /^\/(\d{12})\/([^/?]+)/.exec(path);
  if (
    body.QueueUrl === undefined &&
    queuePath &&
    action !== 'ListQueues' &&
    action !== 'GetQueueUrl'
  )
    body.QueueUrl = `http://${host}/${queuePath[1]}/${queuePath[2]}`;
  return { action, body };
};

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  '\r': '&#13;',
};
const xmlText = (value: string) => value.replace(/[&<>"'\r]/g, (c) => ENTITIES[c] ?? c);

const element = (name: string, inner: string) => `<${name}>${inner}</${name}>`;

const scalar = (name: string, value: unknown) =>
  value === undefined || value === null ? '' : element(name, xmlText(String(value)));

const pairs = (name: string, key: string, map: unknown) =>
  Object.entries((map ?? {}) as Record<string, unknown>)
    .map(([k, v]) => element(name, scalar(key, k) + scalar('Value', v)))
    .join('');

const messageAttributes = (map: unknown) =>
  Object.entries((map ?? {}) as Record<string, Record<string, unknown>>)
    .map(([name, value]) =>
      element(
        'MessageAttribute',
        scalar('Name', name) +
          element(
            'Value',
            scalar('StringValue', value.StringValue) +
              scalar('BinaryValue', value.BinaryValue) +
              scalar('DataType', value.DataType),
          ),
      ),
    )
    .join('');

/** A JSON answer's members as the query protocol's XML elements. */
const toXml = (value: Record<string, unknown>, action: string): string =>
  Object.entries(value)
    .map(([key, member]) => {
      if (key === 'Attributes') return pairs('Attribute', 'Name', member);
      if (key === 'Tags') return pairs('Tag', 'Key', member);
      if (key === 'MessageAttributes') return messageAttributes(member);
      if (Array.isArray(member)) {
        const name =
          key === 'QueueUrls' || key === 'queueUrls'
            ? 'QueueUrl'
            : key === 'Messages'
              ? 'Message'
              : key === 'Successful'
                ? `${action}ResultEntry`
                : key === 'Failed'
                  ? 'BatchResultErrorEntry'
                  : key === 'Results'
                    ? `${action}ResultEntry`
                    : key;
        return member
          .map((m) =>
            typeof m === 'object' && m !== null
              ? element(name, toXml(m as Record<string, unknown>, action))
              : scalar(name, m),
          )
          .join('');
      }
      if (typeof member === 'object' && member !== null)
        return element(key, toXml(member as Record<string, unknown>, action));
      return scalar(key, member);
    })
    .join('');

const requestId = () => crypto.randomUUID();

/** A JSON-protocol answer's body. */
const JsonObjectSchema = v.record(v.string(), v.unknown());

/** The query protocol's answer to a JSON-protocol answer (success or error). */
export const jsonToQuery = (
  action: string,
  answer: { status: number; headers: Record<string, string | undefined>; body: string },
): { status: number; xml: string } => {
  let json: Record<string, unknown> = {};
  try {
    const parsed = v.safeParse(
      JsonObjectSchema,
      answer.body.trim() === '' ? {} : JSON.parse(answer.body),
    );
    json = parsed.success ? parsed.output : { message: answer.body };
  } catch {
    json = { message: answer.body };
  }
  if (answer.status >= 400) {
    // fauxqs, like SQS, names the query protocol's code (and fault) in x-amzn-query-error.
    const [queryCode, fault] = (answer.headers['x-amzn-query-error'] ?? '').split(';');
    const code = queryCode || String(json.__type ?? 'InternalFailure').replace(/^.*#/, '');
    const type = fault || (answer.status >= 500 ? 'Receiver' : 'Sender');
    return {
      status: answer.status,
      xml: `<?xml version="1.0"?><ErrorResponse xmlns="${NAMESPACE}"><Error><Type>${type}</Type><Code>${xmlText(code)}</Code><Message>${xmlText(String(json.message ?? json.Message ?? ''))}</Message><Detail/></Error><RequestId>${requestId()}</RequestId></ErrorResponse>`,
    };
  }
  const result = toXml(json, action);
  return {
    status: 200,
    xml: `<?xml version="1.0"?><${action}Response xmlns="${NAMESPACE}">${result === '' ? `<${action}Result/>` : element(`${action}Result`, result)}<ResponseMetadata><RequestId>${requestId()}</RequestId></ResponseMetadata></${action}Response>`,
  };
};

/**
 * Answers a query-protocol SQS request by sending its JSON form to `edge` (the edge itself) and
 * translating the answer back.
 */
export const answerSqsQuery = async (
  req: IncomingMessage,
  res: ServerResponse,
  params: URLSearchParams,
  edge: string,
): Promise<void> => {
  const host = req.headers.host ?? new URL(edge).host;
  const { action, body } = queryToJson(params, new URL(req.url ?? '/', edge).pathname, host);
  const headers: Record<string, string> = {
    host,
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': `AmazonSQS.${action}`,
  };
  // The signer's key tells the edge's fault hooks which environment calls.
  if (req.headers.authorization) headers.authorization = req.headers.authorization;
  const json = JSON.stringify(body);
  const answer = await requestUpstream(edge, { method: 'POST', path: '/', headers, body: json });
  // A long poll whose caller left: what it took goes back to the queue (orphaned-receives.ts).
  if (action === 'ReceiveMessage' && (res.closed || res.destroyed))
    return releaseOrphaned(edge, Buffer.from(json), Buffer.from(answer.body));
  const { status, xml } = jsonToQuery(action, answer);
  res.writeHead(status, { 'content-type': 'text/xml' });
  res.end(xml);
};
