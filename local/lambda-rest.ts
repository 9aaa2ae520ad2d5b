/** Lambda's REST answers on the local edge: JSON bodies, and errors in Lambda's shape. */
import type { ServerResponse } from 'node:http';

export const json = (res: ServerResponse, status: number, body: unknown, headers = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

export const error = (res: ServerResponse, status: number, type: string, message: string) =>
  json(res, status, { Type: 'User', message }, { 'x-amzn-errortype': type });

/** The request's JSON body; undefined when it is not JSON (answered 400 by the caller). */
export const parseJson = (body: string, empty: unknown): { value: unknown } | undefined => {
  try {
    return { value: body === '' ? empty : JSON.parse(body) };
  } catch {
    return undefined;
  }
};

export const notJson = (res: ServerResponse) =>
  error(res, 400, 'InvalidRequestContentException', 'Could not parse request body into json');
