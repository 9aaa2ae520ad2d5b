/**
 * The edge's reading of SQS query-protocol requests (the AWS CLI v2.9, the SDK v2): the member
 * names come from whoever sends the request, so none may reach an object's prototype.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonToQuery, queryToJson } from '../../local/sqs-query.ts';

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

  it('reads a flattened list in index order past the ninth member', () => {
    const ids = Array.from({ length: 12 }, (_, i) => `e${i + 1}`);
    const params = new URLSearchParams([['Action', 'SendMessageBatch']]);
    // Sent in another order than their indexes: the index, not the position, places a member.
    for (const [i, id] of [...ids.entries()].reverse()) {
      params.append(`SendMessageBatchRequestEntry.${i + 1}.Id`, id);
      params.append(`SendMessageBatchRequestEntry.${i + 1}.MessageBody`, id);
      params.append(`AttributeName.${i + 1}`, id);
    }
    const { body } = queryToJson(params, '/', 'localhost');
    expect(body.Entries).toEqual(ids.map((id) => ({ Id: id, MessageBody: id })));
    expect(body.AttributeNames).toEqual(ids);
  });

  it('gives the JSON protocol’s integer members as numbers, every other member as text', () => {
    const params = new URLSearchParams({
      Action: 'ReceiveMessage',
      QueueUrl: 'q',
      MaxNumberOfMessages: '10',
      VisibilityTimeout: '30',
      WaitTimeSeconds: '20',
      ReceiveRequestAttemptId: '7',
    });
    expect(queryToJson(params, '/', 'localhost').body).toEqual({
      QueueUrl: 'q',
      MaxNumberOfMessages: 10,
      VisibilityTimeout: 30,
      WaitTimeSeconds: 20,
      ReceiveRequestAttemptId: '7',
    });
    const delayed = new URLSearchParams(
      'Action=SendMessage&QueueUrl=q&MessageBody=1&DelaySeconds=5',
    );
    expect(queryToJson(delayed, '/', 'localhost').body).toEqual({
      QueueUrl: 'q',
      MessageBody: '1',
      DelaySeconds: 5,
    });
  });

  it('names the side at fault in an error as SQS does: the caller below 500, SQS from 500', () => {
    const typeOf = (status: number, headers: Record<string, string | undefined> = {}) =>
      /<Type>(\w+)<\/Type>/.exec(
        jsonToQuery('SendMessage', { status, headers, body: '{"message":"m"}' }).xml,
      )?.[1];
    expect(typeOf(400)).toBe('Sender');
    expect(typeOf(500)).toBe('Receiver');
    expect(typeOf(503)).toBe('Receiver');
    // fauxqs names the fault itself where it knows it.
    expect(
      typeOf(400, { 'x-amzn-query-error': 'AWS.SimpleQueueService.NonExistentQueue;Sender' }),
    ).toBe('Sender');
    expect(typeOf(500, { 'x-amzn-query-error': 'InternalError;Receiver' })).toBe('Receiver');
  });

  it('escapes every character XML would change, a carriage return included', () => {
    const body = JSON.stringify({ Messages: [{ Body: 'a\r\nb <c> & "d" \'e\'' }] });
    const { xml } = jsonToQuery('ReceiveMessage', { status: 200, headers: {}, body });
    expect(xml).toContain(
      '<Message><Body>a&#13;\nb &lt;c&gt; &amp; &quot;d&quot; &apos;e&apos;</Body></Message>',
    );
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
