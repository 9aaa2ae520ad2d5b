/**
 * Just enough CloudFormation for tools to find a locally running stack the way they find a
 * deployed one: DescribeStacks with its outputs, GetTemplate with the template last deployed, and
 * ListStackResources with each resource's physical id (query protocol, XML answers as AWS gives
 * them).
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { physicalName, type Template } from './template.ts';

export interface LocalStackRecord {
  readonly name: string;
  readonly outputs: Readonly<Record<string, string>>;
  readonly createdAt: Date;
  /** The template as deployed: what `GetTemplate` answers (JSON, as CDK synthesizes it). */
  readonly template: unknown;
  /** Each of its resources, read when asked: a physical id can change (a mapping re-created). */
  readonly resources: () => readonly LocalStackResource[];
}

/** One resource of a stack, as `ListStackResources` lists it. */
export interface LocalStackResource {
  readonly logicalId: string;
  readonly type: string;
  readonly physicalId: string;
}

/**
 * Each resource of a template with its physical id: the local one where `physicalIdOf` knows it,
 * else the deterministic local name (`<stack>-<logicalId>`) of something not emulated.
 */
export const localResources = (
  stackName: string,
  template: Template,
  physicalIdOf: (logicalId: string, type: string) => string | undefined,
): LocalStackResource[] =>
  Object.entries(template.Resources).map(([logicalId, { Type: type }]) => ({
    logicalId,
    type,
    physicalId: physicalIdOf(logicalId, type) ?? physicalName(stackName, logicalId, 64),
  }));

const xml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const NS = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';

export const CLOUDFORMATION_ACTIONS = new Set([
  'DescribeStacks',
  'GetTemplate',
  'ListStackResources',
]);

const validationError = (res: ServerResponse, requestId: string, message: string) => {
  res.writeHead(400, { 'content-type': 'text/xml' });
  res.end(
    `<ErrorResponse xmlns="${NS}"><Error><Type>Sender</Type><Code>ValidationError</Code><Message>${xml(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
  );
};

const answer = (res: ServerResponse, requestId: string, action: string, result: string) => {
  res.writeHead(200, { 'content-type': 'text/xml' });
  res.end(
    `<${action}Response xmlns="${NS}"><${action}Result>${result}</${action}Result><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></${action}Response>`,
  );
};

const describe = (stacks: readonly LocalStackRecord[], region: string) =>
  `<Stacks>${stacks
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
    .join('')}</Stacks>`;

export const answerCloudFormation = (
  action: string,
  params: URLSearchParams,
  stacks: ReadonlyMap<string, LocalStackRecord>,
  region: string,
  res: ServerResponse,
): void => {
  const requestId = randomUUID();
  const name = params.get('StackName');
  const chosen = name ? [stacks.get(name)].filter((s) => s !== undefined) : [...stacks.values()];
  const [stack] = chosen;
  if (action === 'GetTemplate' && !name)
    validationError(res, requestId, 'Either StackName or ChangeSetName must be specified');
  else if (action === 'ListStackResources' && !name)
    validationError(res, requestId, 'StackName must not be null');
  else if (name && !stack) validationError(res, requestId, `Stack with id ${name} does not exist`);
  else if (action === 'DescribeStacks') answer(res, requestId, action, describe(chosen, region));
  else if (action === 'ListStackResources')
    answer(
      res,
      requestId,
      action,
      `<StackResourceSummaries>${(stack?.resources() ?? [])
        .map(
          (r) =>
            `<member><LogicalResourceId>${xml(r.logicalId)}</LogicalResourceId><PhysicalResourceId>${xml(r.physicalId)}</PhysicalResourceId>` +
            `<ResourceType>${xml(r.type)}</ResourceType><LastUpdatedTimestamp>${stack?.createdAt.toISOString()}</LastUpdatedTimestamp>` +
            '<ResourceStatus>CREATE_COMPLETE</ResourceStatus><DriftInformation><StackResourceDriftStatus>NOT_CHECKED</StackResourceDriftStatus></DriftInformation></member>',
        )
        .join('')}</StackResourceSummaries>`,
    );
  else
    answer(
      res,
      requestId,
      action,
      `<TemplateBody>${xml(JSON.stringify(stack?.template))}</TemplateBody><StagesAvailable><member>Original</member><member>Processed</member></StagesAvailable>`,
    );
};
