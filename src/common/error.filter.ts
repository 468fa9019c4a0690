import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger, NotFoundException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { EventStoreUnavailableError } from '../event-store/event-store.port.js';
import { isConnectionError } from '../database/connection-errors.js';
import { AppError } from './errors.js';
import { methodsAllowed } from './route-table.js';
import type { ErrorEnvelope } from './envelope.js';

const HTTP_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
  431: 'headers_too_large',
  503: 'service_unavailable',
};

const logger = new Logger('ErrorFilter');

/**
 * Answers `exception` in the error envelope: the one mapping of errors to HTTP, used by the
 * exception filter on Nest's routes and directly by routes registered on Fastify itself. Anything
 * unmapped is a bug: 500, logged without the request body.
 */
export function sendError(reply: FastifyReply, exception: unknown): FastifyReply {
  const [status, body] = toEnvelope(exception, reply.request);
  if (status === 405) void reply.header('allow', (methodsAllowed(reply.request) ?? []).join(', '));
  if (status >= 500 && status !== 502 && status !== 503) {
    logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : 'non-error thrown');
  }
  // A 429 says when to come back, whoever refused it (the key guard sets it already; the console's sign-in throttle does not).
  const retryAfter = body.error.details.retryAfterSeconds;
  if (status === 429 && typeof retryAfter === 'number' && !reply.hasHeader('retry-after')) void reply.header('retry-after', retryAfter);
  return reply.status(status).header('content-type', 'application/json; charset=utf-8').send(body);
}

@Catch()
export class ErrorFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    void sendError(host.switchToHttp().getResponse<FastifyReply>(), exception);
  }
}

/** Longest path a "no such route" message quotes. */
const MAX_QUOTED_PATH = 256;

/** The path of the request, without its query string (a portrait link's signature travels there). */
function pathOf(request: FastifyRequest | undefined): string {
  const url = request?.url ?? '';
  const query = url.indexOf('?');
  return (query === -1 ? url : url.slice(0, query)).slice(0, MAX_QUOTED_PATH);
}

function toEnvelope(exception: unknown, request: FastifyRequest | undefined): [number, ErrorEnvelope] {
  // A 500 is a bug (InvariantViolated): its message names internals, so the client gets the generic answer and the log the rest.
  if (exception instanceof AppError && exception.httpStatus >= 500 && exception.httpStatus !== 502 && exception.httpStatus !== 503) {
    return [exception.httpStatus, { status: false, error: { code: 'internal_error', message: 'An unexpected error occurred', details: {} } }];
  }
  if (exception instanceof AppError) {
    return [exception.httpStatus, { status: false, error: { code: exception.code, message: exception.message, details: exception.details } }];
  }
  if (exception instanceof EventStoreUnavailableError || isConnectionError(exception)) {
    return [503, { status: false, error: { code: 'service_unavailable', message: 'A backing store is unavailable; try again shortly', details: {} } }];
  }
  // Nest's router answers an unknown route with "Cannot GET <url>", query string included.
  if (exception instanceof NotFoundException && request !== undefined) {
    // The path exists, for other methods: the method is what is wrong.
    if (methodsAllowed(request) !== undefined) {
      return [405, { status: false, error: { code: 'method_not_allowed', message: `${request.method} is not allowed on ${pathOf(request)}`, details: {} } }];
    }
    return [404, { status: false, error: { code: 'not_found', message: `Cannot ${request.method} ${pathOf(request)}`, details: {} } }];
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const code = HTTP_CODES[status] ?? (status >= 500 ? 'internal_error' : 'bad_request');
    const response = exception.getResponse();
    const given = typeof response === 'string' ? response : (response as { message?: unknown }).message;
    const message = typeof given === 'string' ? given : Array.isArray(given) ? given.join(',') : exception.message;
    return [status, { status: false, error: { code, message, details: {} } }];
  }
  // Fastify's own errors (malformed JSON, body too large, bad content type) carry a statusCode.
  const statusCode = (exception as { statusCode?: unknown } | null)?.statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    const message = statusCode === 400 ? 'The request body is not valid JSON' : (exception as Error).message;
    return [statusCode, { status: false, error: { code: HTTP_CODES[statusCode] ?? 'bad_request', message, details: {} } }];
  }
  return [500, { status: false, error: { code: 'internal_error', message: 'An unexpected error occurred', details: {} } }];
}
