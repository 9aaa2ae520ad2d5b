/**
 * The local provisioner's reading of CloudFormation's intrinsic functions: each resolves as
 * CloudFormation documents it, and a template that misuses one is told which and how.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Fn::Sub's own ${} syntax is the subject
import { describe, expect, it } from 'vitest';
import {
  type PhysicalResource,
  type ResolveContext,
  resolve,
  UnresolvableError,
} from '../../local/template.ts';

const ctx: ResolveContext = {
  region: 'eu-west-1',
  accountId: '000000000000',
  stackName: 'onceflow',
  resources: new Map<string, PhysicalResource>([
    ['Queue', { ref: 'http://edge/000000000000/q', attributes: { Arn: 'arn:q', QueueName: 'q' } }],
    ['Db', { ref: 'db-1', attributes: { 'Endpoint.Address': 'db.local' } }],
  ]),
};

describe('resolving intrinsic functions locally', () => {
  it('resolves each supported function as CloudFormation does, nested', () => {
    expect(
      resolve(
        {
          url: { Ref: 'Queue' },
          region: { Ref: 'AWS::Region' },
          arn: { 'Fn::GetAtt': ['Queue', 'Arn'] },
          name: { 'Fn::GetAtt': 'Queue.QueueName' },
          address: { 'Fn::GetAtt': 'Db.Endpoint.Address' },
          joined: { 'Fn::Join': ['/', [{ Ref: 'AWS::AccountId' }, { Ref: 'Db' }]] },
          second: { 'Fn::Select': ['1', { 'Fn::Split': [',', 'a,b,c'] }] },
          sub: { 'Fn::Sub': '${AWS::StackName}-${Queue.QueueName}-${Db.Endpoint.Address}' },
          withVars: { 'Fn::Sub': ['${Name}:${AWS::Region}', { Name: { Ref: 'Db' } }] },
          literal: { 'Fn::Sub': 'keep ${!Literal} as written' },
        },
        ctx,
      ),
    ).toEqual({
      url: 'http://edge/000000000000/q',
      region: 'eu-west-1',
      arn: 'arn:q',
      name: 'q',
      address: 'db.local',
      joined: '000000000000/db-1',
      second: 'b',
      sub: 'onceflow-q-db.local',
      withVars: 'db-1:eu-west-1',
      literal: 'keep ${Literal} as written',
    });
  });

  it.each([
    [{ 'Fn::Join': ',' }, 'Fn::Join takes [delimiter, [values]], not ","'],
    [{ 'Fn::Join': [',', { Ref: 'AWS::Region' }] }, 'Fn::Join needs a list of values'],
    [{ 'Fn::Select': [-1, ['a']] }, 'Fn::Select takes [index, [values]]'],
    [{ 'Fn::Select': [2, ['a', 'b']] }, 'Fn::Select index 2 is past the end of a list of 2'],
    [{ 'Fn::Sub': ['${X}', 'vars'] }, 'Fn::Sub takes text or [text, {variables}]'],
    [{ 'Fn::GetAtt': 'Queue' }, 'Fn::GetAtt takes [logicalId, attribute]'],
    [{ Ref: ['Queue'] }, 'Ref takes a logical id, not ["Queue"]'],
    [{ 'Fn::GetAtt': ['Queue', 'Missing'] }, 'Queue has no attribute Missing locally'],
    [{ 'Fn::If': ['C', 'a', 'b'] }, 'Fn::If is not supported locally'],
  ])('names the function and what it takes when a template gives %j', (value, message) => {
    expect(() => resolve(value, ctx)).toThrow(UnresolvableError);
    expect(() => resolve(value, ctx)).toThrow(message);
  });
});
