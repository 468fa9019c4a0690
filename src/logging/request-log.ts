import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isIPv4, isIPv6 } from 'node:net';
import type { Logger } from 'pino';
import { callerRequestIdHashOf } from '../common/request-context.js';

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

/** Polled by scrapers and load balancers many times a minute: not worth a line each. */
const QUIET_PATHS = new Set(['/metrics', '/v1/health', '/health/ready']);
/** Longest path a line quotes. */
const MAX_LOGGED_PATH = 256;
/**
 * The request headers a line shows: what helps to trace a request, and nothing that carries a
 * credential. Every other header (the key, tokens, cookies, a partner's custom secret header) is
 * left out, named or not, so a header nobody thought of is never logged. Nor are the browser
 * (user-agent), the client's addresses (x-forwarded-for) or the caller's X-Request-Id, which may
 * carry anything, a customer's NIN included: a line names the caller's id by its keyed hash only
 * (`callerRequestIdHash`, with REQUEST_ID_HASH_KEY), and the peer address with its host part zeroed.
 */
export const LOGGED_REQUEST_HEADERS: readonly string[] = ['accept', 'accept-encoding', 'content-length', 'content-type', 'host', 'origin'];
/** Longest header value a line quotes. */
const MAX_LOGGED_HEADER = 256;

function loggedHeaders(request: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of LOGGED_REQUEST_HEADERS) {
    const value = request.headers[name];
    if (value !== undefined) headers[name] = (Array.isArray(value) ? value.join(', ') : value).slice(0, MAX_LOGGED_HEADER);
  }
  return headers;
}

const current = new AsyncLocalStorage<RequestLogFields>();

/**
 * The fields of the request being handled, if any: the process's logger merges them into every
 * line (its `mixin`, logger.ts), so a line written anywhere below a handler names its request.
 */
export function requestLogFields(): RequestLogFields | undefined {
  return current.getStore();
}

/** The request's log fields, made on first use: one object for every line of the request. */
function fieldsOf(request: FastifyRequest): RequestLogFields {
  return (request.logFields ??= { requestId: String(request.id) });
}

/** Every later line of this request, its completion line included, names the organization and the key (never the key itself). */
export function bindRequestLog(request: FastifyRequest, fields: { organizationId: string; keyId: string }): void {
  const logFields = fieldsOf(request);
  logFields.organizationId = fields.organizationId;
  logFields.keyId = fields.keyId;
}

/** The path only, bounded: query strings may carry signed-link signatures. */
function pathOf(url: string): string {
  const query = url.indexOf('?');
  return (query === -1 ? url : url.slice(0, query)).slice(0, MAX_LOGGED_PATH);
}

/** The network of an address, not the host: IPv4 to its /24, IPv6 to its /48 (an IPv4-mapped IPv6 as IPv4). */
export function anonymisedAddress(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  const v4 = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
  if (isIPv4(v4)) return `${v4.split('.').slice(0, 3).join('.')}.0`;
  if (!isIPv6(address)) return undefined;
  const [left, right] = address.split('::');
  const head = left === '' ? [] : left.split(':');
  const tail = right === undefined || right === '' ? [] : right.split(':');
  const groups = right === undefined ? head : [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail];
  return `${groups.slice(0, 3).join(':')}::`;
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
  // The request as the line shows it: the method, the path, the headers of LOGGED_REQUEST_HEADERS
  // and the peer's network; never the query string, never the body, never another header.
  const callerRequestIdHash = callerRequestIdHashOf(request);
  logger[level](
    {
      ...fieldsOf(request),
      ...(callerRequestIdHash === undefined ? {} : { callerRequestIdHash }),
      req: { method: request.method, url: path, headers: loggedHeaders(request), remoteAddress: anonymisedAddress(request.ip) },
      res: { statusCode: reply.statusCode },
      durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
    },
    `${request.method} ${path} ${reply.statusCode}`,
  );
}

/**
 * Request logging on Fastify's own hooks: the request's fields are entered as the async context of
 * its handler (after the body is read, whose stream events would lose a context entered earlier),
 * and one line is written when the response has gone, at info (warn for 502 and 503, error for
 * other 5xx), with the method, the path, the status and the duration. Nothing is built per request
 * beyond the fields object unless a line is actually written.
 */
export function registerRequestLogging(fastify: FastifyInstance, logger: Logger): void {
  fastify.addHook('preHandler', (request, _reply, done) => {
    current.run(fieldsOf(request), done);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    logCompletion(logger, request, reply);
    done();
  });
}
