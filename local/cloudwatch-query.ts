/**
 * CloudWatch's query protocol on the local edge, for the clients that still speak it (the AWS
 * SDK for JavaScript v2, the AWS CLI before it moved to JSON): a form-encoded request
 * (`Action=DescribeAlarms&AlarmNames.member.1=…`) becomes the JSON input the edge's CloudWatch
 * takes, and its output, or error, the XML the query protocol returns.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { cloudWatchAction } from './cloudwatch-api.ts';
import { type CloudWatchBackend, CloudWatchError } from './cloudwatch-operation.ts';

const NAMESPACE = 'http://monitoring.amazonaws.com/doc/2010-08-01/';
export const CLOUDWATCH_QUERY_VERSION = '2010-08-01';

/**
 * Members the JSON protocol types as numbers (the query protocol sends every value as text); a
 * datum's `Value` is a number, a dimension's a string.
 */
const NUMBERS = new Set([
  'Period',
  'EvaluationPeriods',
  'DatapointsToAlarm',
  'Threshold',
  'MaxRecords',
  'MetricData.Value',
  'Values',
  'Counts',
]);
/** Members that are booleans (`true` or `false` in the query protocol). */
const BOOLEANS = new Set(['ReturnData', 'ActionsEnabled']);
/** Members that are timestamps: ISO 8601 in the query protocol, epoch seconds in JSON. */
const TIMESTAMPS = new Set(['StartTime', 'EndTime', 'StartDate', 'EndDate', 'Timestamp']);

type Tree = { [key: string]: Tree | string };

/**
 * The request's parameters as the JSON protocol's input: `A.member.2.B` is the second item's
 * `B` of list `A`, numbers and timestamps typed as JSON has them.
 */
export const queryInput = (params: URLSearchParams): Record<string, unknown> => {
  const root: Tree = {};
  for (const [key, value] of params) {
    if (key === 'Action' || key === 'Version') continue;
    const path = key.split('.');
    let node = root;
    path.forEach((part, i) => {
      if (i === path.length - 1) node[part] = value;
      else {
        let next = node[part];
        if (typeof next !== 'object') {
          next = {};
          node[part] = next;
        }
        node = next;
      }
    });
  }
  const typed = (name: string, value: Tree | string, parent = ''): unknown => {
    if (typeof value === 'string') {
      if (NUMBERS.has(name) || NUMBERS.has(`${parent}.${name}`)) return Number(value);
      if (TIMESTAMPS.has(name)) return Date.parse(value) / 1000;
      if (BOOLEANS.has(name)) return value === 'true';
      return value;
    }
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === 'member') {
      const members = value.member;
      if (members === undefined || typeof members === 'string') return [];
      // `member.1`, `member.2`…, in their numbers' order.
      return Object.entries(members)
        .sort(([a], [b]) => Number(a) - Number(b))
        .map(([, item]) => typed(name, item, parent));
    }
    return Object.fromEntries(keys.map((k) => [k, typed(k, value[k] ?? '', name)]));
  };
  return Object.fromEntries(Object.entries(root).map(([k, x]) => [k, typed(k, x)]));
};

const xml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The JSON output as the query protocol's XML: lists as `member`s, timestamps as ISO 8601. */
export const queryXml = (name: string, value: unknown, timestamp = false): string => {
  if (value === undefined || value === null) return '';
  // `Timestamps` (GetMetricData's) is a list of them.
  if (Array.isArray(value))
    return `<${name}>${value.map((item) => queryXml('member', item, name === 'Timestamps')).join('')}</${name}>`;
  if (typeof value === 'object')
    return `<${name}>${Object.entries(value)
      .map(([k, x]) => queryXml(k, x))
      .join('')}</${name}>`;
  const text =
    typeof value === 'number' && (timestamp || name.endsWith('Timestamp'))
      ? new Date(value * 1000).toISOString()
      : String(value);
  return `<${name}>${xml(text)}</${name}>`;
};

/** Answers a query-protocol CloudWatch request whose form `params` name its action. */
export const answerCloudWatchQuery = async (
  res: ServerResponse,
  params: URLSearchParams,
  cw: CloudWatchBackend,
): Promise<void> => {
  const action = params.get('Action') ?? '';
  const requestId = randomUUID();
  try {
    const output = await cloudWatchAction(cw, action, queryInput(params));
    res.writeHead(200, { 'content-type': 'text/xml' });
    res.end(
      `<${action}Response xmlns="${NAMESPACE}">${queryXml(`${action}Result`, output)}<ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></${action}Response>`,
    );
  } catch (error) {
    if (!(error instanceof CloudWatchError)) throw error;
    res.writeHead(error.status, { 'content-type': 'text/xml' });
    res.end(
      `<ErrorResponse xmlns="${NAMESPACE}"><Error><Type>Sender</Type><Code>${error.code}</Code><Message>${xml(error.message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
    );
  }
};
