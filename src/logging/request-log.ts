import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

/** What every log line written while a request is handled carries, beside its own fields. */
export interface RequestLogFields {
  readonly requestId: string;
  organizationId?: string;
  keyId?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** This request's log fields: the same object every log line of the request reads (see `requestLogFields`). */
    logFields?: RequestLogFields;
  }
}

export interface SerializedRequest {
  readonly method: string;
  /** The path only: query strings may carry signed-link signatures. */
  readonly url: string;
  readonly headers: Record<string, unknown>;
  readonly remoteAddress?: string;
}

/** Polled by scrapers and load balancers many times a minute: not worth a line each. */
const QUIET_PATHS = new Set(['/metrics', '/v1/health', '/health/ready']);
/** Longest path a line quotes. */
const MAX_LOGGED_PATH = 256;

const current = new AsyncLocalStorage<RequestLogFields>();

/**
 * The fields of the request being handled, if any: the process's logger merges them into every
 * line (its `mixin`, logger.ts), so a line written anywhere below a handler names its request.
 */
export function requestLogFields(): RequestLogFields | undefined {
  return current.getStore();
}

/** Every later line of this request, its completion line included, names the organization and the key (never the key itself). */
export function bindRequestLog(request: FastifyRequest, fields: { organizationId: string; keyId: string }): void {
  if (request.logFields === undefined) return;
  request.logFields.organizationId = fields.organizationId;
  request.logFields.keyId = fields.keyId;
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return (query === -1 ? url : url.slice(0, query)).slice(0, MAX_LOGGED_PATH);
}

/**
 * The request as a log line shows it: the method, the path (bounded), the headers (the logger
 * redacts the credentials among them, logger.ts) and the peer address; never the query string
 * (signed links carry signatures there) and never the body.
 */
export function serializeRequest(request: { method?: string; url?: string; headers?: Record<string, unknown>; remoteAddress?: string }): SerializedRequest {
  return { method: request.method ?? '', url: pathOf(request.url ?? ''), headers: { ...request.headers }, remoteAddress: request.remoteAddress };
}

/** 5xx are errors, except 502 and 503, which say an upstream or a store failed, not this code. */
function levelOf(statusCode: number): 'info' | 'warn' | 'error' {
  if (statusCode < 500) return 'info';
  return statusCode === 502 || statusCode === 503 ? 'warn' : 'error';
}

function logCompletion(logger: Logger, request: FastifyRequest, reply: FastifyReply): void {
  const level = levelOf(reply.statusCode);
  if (!logger.isLevelEnabled(level)) return;
  const path = pathOf(request.url);
  if (QUIET_PATHS.has(path)) return;
  // Written with the request's fields explicitly: onResponse runs outside the handler's context.
  logger[level](
    {
      ...(request.logFields ?? { requestId: String(request.id) }),
      req: serializeRequest({ method: request.method, url: request.url, headers: request.headers, remoteAddress: request.ip }),
      res: { statusCode: reply.statusCode },
      durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
    },
    `${request.method} ${path} ${reply.statusCode}`,
  );
}

/**
 * Request logging on Fastify's own hooks: the request's fields are set when it arrives, entered
 * as the async context of its handler (after the body is read, whose stream events would lose a
 * context entered earlier), and one line is written when the response has gone, at info (warn for
 * 502 and 503, error for other 5xx), with the method, the path, the status and the duration.
 * Nothing is built per request beyond the fields object unless a line is actually written.
 */
export function registerRequestLogging(fastify: FastifyInstance, logger: Logger): void {
  fastify.addHook('onRequest', (request, _reply, done) => {
    request.logFields = { requestId: String(request.id) };
    done();
  });
  fastify.addHook('preHandler', (request, _reply, done) => {
    current.run(request.logFields ?? { requestId: String(request.id) }, done);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    logCompletion(logger, request, reply);
    done();
  });
}
