/**
 * Just enough CloudFormation for tools to find a locally running stack the way they find a
 * deployed one: DescribeStacks with its outputs (query protocol, XML answers as AWS gives them).
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';

export interface LocalStackRecord {
  readonly name: string;
  readonly outputs: Readonly<Record<string, string>>;
  readonly createdAt: Date;
}

const xml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const NS = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';

export const CLOUDFORMATION_ACTIONS = new Set(['DescribeStacks']);

export const answerCloudFormation = (
  params: URLSearchParams,
  stacks: ReadonlyMap<string, LocalStackRecord>,
  region: string,
  res: ServerResponse,
): void => {
  const requestId = randomUUID();
  const name = params.get('StackName');
  const chosen = name ? [stacks.get(name)].filter((s) => s !== undefined) : [...stacks.values()];
  if (name && chosen.length === 0) {
    res.writeHead(400, { 'content-type': 'text/xml' });
    res.end(
      `<ErrorResponse xmlns="${NS}"><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id ${xml(name)} does not exist</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
    );
    return;
  }
  const members = chosen
    .map(
      (s) =>
        `<member><StackName>${xml(s.name)}</StackName><StackId>arn:aws:cloudformation:${region}:000000000000:stack/${xml(s.name)}/local</StackId>` +
        `<StackStatus>CREATE_COMPLETE</StackStatus><CreationTime>${s.createdAt.toISOString()}</CreationTime><Outputs>` +
        Object.entries(s.outputs)
          .map(
            ([k, v]) =>
              `<member><OutputKey>${xml(k)}</OutputKey><OutputValue>${xml(v)}</OutputValue></member>`,
          )
          .join('') +
        '</Outputs></member>',
    )
    .join('');
  res.writeHead(200, { 'content-type': 'text/xml' });
  res.end(
    `<DescribeStacksResponse xmlns="${NS}"><DescribeStacksResult><Stacks>${members}</Stacks></DescribeStacksResult><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></DescribeStacksResponse>`,
  );
};
