import type { FastifyRequest } from 'fastify';
import type { Actor, CommandContext } from './event.js';

/** What a caller's X-Request-Id may be to be echoed: a plain token, so it cannot break a header or a log line. */
const CALLER_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * The correlation id of every event a request causes: the server's own request id, never the
 * caller's X-Request-Id. A caller may put anything in that header, a customer's identity number
 * included, and the event log keeps what it is given for ever, beyond any erasure.
 */
export function commandContext(request: FastifyRequest, actor: Actor): CommandContext {
  return { correlationId: String(request.id), actor };
}

/** The caller's X-Request-Id when it is a plain token, else undefined. */
export function callerRequestId(request: Pick<FastifyRequest, 'headers'>): string | undefined {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && CALLER_REQUEST_ID.test(given) ? given : undefined;
}

/**
 * The X-Request-Id of an answer: the caller's own, so its logs and ours line up (the request's log
 * line shows both), or else the server's id.
 */
export function echoedRequestId(request: FastifyRequest): string {
  return callerRequestId(request) ?? String(request.id);
}
