import { type DynamicModule, RequestMethod } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';
import { serializeRequest } from './logger.js';

/** Polled by scrapers and load balancers many times a minute: not worth a line each. */
const QUIET_PATHS = new Set(['/metrics', '/v1/health', '/health/ready']);

/** Nest's middleware runner rewrites `url` under a mounted path; `originalUrl` keeps the request's own. */
function pathOf(request: IncomingMessage & { originalUrl?: string }): string {
  const url = request.originalUrl ?? request.url ?? '';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * nestjs-pino over the process's logger. Every line logged while a request is handled carries
 * `requestId` (Fastify's request id, which @fastify/middie puts on the raw request and which is
 * echoed as X-Request-Id), and `organizationId` and `keyId` once the key guard has assigned them.
 * The request's own line ("request completed") carries the method, path, status and duration.
 *
 * nestjs-pino keeps its middleware in a module-level singleton: the first application built in a
 * process decides the logger of every later one in that process (one per process in production).
 */
export function loggingModule(logger: Logger): DynamicModule {
  return LoggerModule.forRoot({
    // nestjs-pino's default route, `{/*splat}`, matches no request on the Fastify adapter of NestJS 12.5.
    forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
    assignResponse: true,
    pinoHttp: {
      logger,
      quietReqLogger: true,
      customAttributeKeys: { reqId: 'requestId', responseTime: 'durationMs' },
      serializers: {
        req: serializeRequest,
        res: (response: { statusCode?: number }) => ({ statusCode: response.statusCode }),
      },
      autoLogging: { ignore: (request: IncomingMessage) => QUIET_PATHS.has(pathOf(request)) },
      customLogLevel: (_request: IncomingMessage, response: ServerResponse, error?: Error) =>
        error !== undefined || response.statusCode >= 500 ? (response.statusCode === 502 || response.statusCode === 503 ? 'warn' : 'error') : 'info',
      customSuccessMessage: (request: IncomingMessage, response: ServerResponse) => `${request.method ?? ''} ${pathOf(request).slice(0, 256)} ${response.statusCode}`,
      customErrorMessage: (request: IncomingMessage, response: ServerResponse) => `${request.method ?? ''} ${pathOf(request).slice(0, 256)} ${response.statusCode}`,
    },
  });
}
