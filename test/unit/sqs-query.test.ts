/**
 * The edge's reading of SQS query-protocol requests (the AWS CLI v2.9, the SDK v2): the member
 * names come from whoever sends the request, so none may reach an object's prototype.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { queryToJson } from '../../local/sqs-query.ts';

const prototypeKeys = () => Object.getOwnPropertyNames(Object.prototype);
const pristine = prototypeKeys();

/** The keys `run` added to Object.prototype, removed again so that no later run inherits them. */
const leakedBy = (run: () => void): string[] => {
  run();
  const leaked = prototypeKeys().filter((key) => !pristine.includes(key));
  for (const key of leaked) delete (Object.prototype as Record<string, unknown>)[key];
  return leaked;
};

describe('query-protocol requests at the edge', () => {
  it('reads a batch entry’s members into the JSON protocol’s shape', () => {
    const params = new URLSearchParams({
      Action: 'SendMessageBatch',
      QueueUrl: 'http://localhost/000000000000/orders',
      'SendMessageBatchRequestEntry.1.Id': 'a',
      'SendMessageBatchRequestEntry.1.MessageBody': 'one',
      'SendMessageBatchRequestEntry.1.DelaySeconds': '2',
      'SendMessageBatchRequestEntry.1.MessageAttribute.1.Name': 'kind',
      'SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType': 'String',
      'SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue': 'order',
      'SendMessageBatchRequestEntry.2.Id': 'b',
      'SendMessageBatchRequestEntry.2.MessageBody': 'two',
    });
    expect(queryToJson(params, '/', 'localhost')).toEqual({
      action: 'SendMessageBatch',
      body: {
        QueueUrl: 'http://localhost/000000000000/orders',
        Entries: [
          {
            Id: 'a',
            MessageBody: 'one',
            DelaySeconds: 2,
            MessageAttributes: { kind: { DataType: 'String', StringValue: 'order' } },
          },
          { Id: 'b', MessageBody: 'two' },
        ],
      },
    });
  });

  it('leaves Object.prototype untouched when a member path names __proto__', () => {
    const params = new URLSearchParams(
      'Action=SendMessage&QueueUrl=q&MessageBody=b&MessageAttribute.__proto__.polluted=yes',
    );
    let body: unknown;
    expect(leakedBy(() => ({ body } = queryToJson(params, '/', 'localhost')))).toEqual([]);
    expect(body).toEqual({ QueueUrl: 'q', MessageBody: 'b', MessageAttributes: {} });
  });

  it('leaves Object.prototype untouched whatever member paths a request holds', () => {
    const segment = fc.constantFrom(
      '__proto__',
      'constructor',
      'prototype',
      '1',
      '2',
      'Name',
      'Value',
      'Attribute',
      'Tag',
      'MessageAttribute',
      'SendMessageBatchRequestEntry',
      'AttributeName',
      'polluted',
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.array(segment, { minLength: 1, maxLength: 5 }), fc.string()), {
          maxLength: 12,
        }),
        (pairs) => {
          const params = new URLSearchParams([['Action', 'SendMessage']]);
          for (const [path, value] of pairs) params.append(path.join('.'), value);
          expect(leakedBy(() => queryToJson(params, '/', 'localhost'))).toEqual([]);
        },
      ),
    );
  });
});
