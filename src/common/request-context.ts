import { createHmac } from 'node:crypto';
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
  const callerRequestIdHash = callerHashes.get(request);
  return callerRequestIdHash === undefined ? { correlationId: String(request.id), actor } : { correlationId: String(request.id), actor, callerRequestIdHash };
}

/** The keyed hashes of callers' ids, by request (see `hashCallerRequestId`). */
const callerHashes = new WeakMap<object, string>();

/**
 * Notes the keyed hash of the caller's X-Request-Id for the events its request writes
 * (REQUEST_ID_HASH_KEY): one who holds the key finds a caller's request in the log by its id, while
 * the log itself never holds the id, which may carry anything.
 */
export function hashCallerRequestId(request: FastifyRequest, key: Buffer): void {
  const given = callerRequestId(request);
  if (given !== undefined) callerHashes.set(request, callerRequestIdHash(key, given));
}

/** The keyed hash of the request's caller X-Request-Id (with REQUEST_ID_HASH_KEY), for its log line. */
export function callerRequestIdHashOf(request: object): string | undefined {
  return callerHashes.get(request);
}

/** HMAC-SHA-256 of a caller's request id, base64url: what events keep as `callerRequestIdHash`. */
export function callerRequestIdHash(key: Buffer, requestId: string): string {
  return createHmac('sha256', key).update(requestId, 'utf8').digest('base64url');
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
