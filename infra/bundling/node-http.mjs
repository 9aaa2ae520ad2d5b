/**
 * `node:http` for the bundles, loaded with require(). An ES module import of a built-in builds a
 * facade that reads every export, and node:http's lazy WebSocket exports then load Node's whole
 * fetch implementation (undici): about 10 ms of the first request, for nothing the SDK uses.
 */
import { createRequire } from 'node:module';

const http = createRequire(import.meta.url)('node:http');

export default http;
export const {
  METHODS,
  STATUS_CODES,
  Agent,
  ClientRequest,
  IncomingMessage,
  OutgoingMessage,
  Server,
  ServerResponse,
  createServer,
  validateHeaderName,
  validateHeaderValue,
  get,
  request,
  setMaxIdleHTTPParsers,
  maxHeaderSize,
  globalAgent,
} = http;
