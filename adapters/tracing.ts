/**
 * X-Ray tracing through the Powertools Tracer, loaded only when enabled: the tracer pulls in
 * the X-Ray SDK, which a function that does not trace should neither bundle nor initialise
 * (the stack leaves it out of such bundles).
 */
import type { MiddlewareObj } from '@middy/core';
import { ConfigError } from '../shared/errors.ts';

export interface Tracing {
  /** Records every call of these AWS SDK clients as a subsegment; returns the same clients. */
  readonly capture: <C extends object>(clients: C) => C;
  /** The middleware that opens the handler's subsegment (none when tracing is off). */
  readonly middlewares: MiddlewareObj[];
}

export const NO_TRACING: Tracing = { capture: (clients) => clients, middlewares: [] };

export const loadTracing = async (enabled: boolean): Promise<Tracing> => {
  if (!enabled) return NO_TRACING;
  let modules: [
    typeof import('@aws-lambda-powertools/tracer'),
    typeof import('@aws-lambda-powertools/tracer/middleware'),
  ];
  try {
    modules = await Promise.all([
      import('@aws-lambda-powertools/tracer'),
      import('@aws-lambda-powertools/tracer/middleware'),
    ]);
  } catch (error) {
    throw new ConfigError(
      'POWERTOOLS_TRACE_ENABLED is true but the tracer is not in this bundle: deploy with -c tracing=true',
      { cause: error },
    );
  }
  const [{ Tracer }, { captureLambdaHandler }] = modules;
  const tracer = new Tracer();
  return {
    capture: (clients) => {
      for (const client of Object.values(clients)) tracer.captureAWSv3Client(client);
      return clients;
    },
    middlewares: [captureLambdaHandler(tracer) as MiddlewareObj],
  };
};
