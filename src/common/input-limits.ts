import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorEnvelope } from './envelope.js';

/**
 * Limits on what a request may carry, enforced before any route runs. Request bodies are bounded
 * by Fastify's `bodyLimit` (BODY_LIMIT_BYTES in app.factory.ts, 413), face_match images by
 * MAX_IMAGE_BYTES once decoded (422), each scope input by its own pattern (422).
 */
export const MAX_HEADER_BYTES = 16 * 1024;
/** Path and query together; every route's parameters are far shorter. */
export const MAX_URL_LENGTH = 2_048;
export const MAX_QUERY_PARAMETERS = 16;
/** Longer than any legitimate query value (a portrait link's signature is 64 characters). */
export const MAX_QUERY_VALUE_LENGTH = 256;

function envelope(code: string, message: string, details: Record<string, unknown> = {}): ErrorEnvelope {
  return { status: false, error: { code, message, details } };
}

/**
 * Node answers a request it cannot parse (headers above MAX_HEADER_BYTES, a broken request line,
 * a slow client) before any route or hook runs; this writes that answer in the error envelope
 * too, then closes the connection as Node would.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  let body = envelope('bad_request', 'The request could not be parsed as HTTP');
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    body = envelope('headers_too_large', `The request line and headers exceed ${MAX_HEADER_BYTES} bytes`);
  } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    body = envelope('request_timeout', 'The request was not received in time');
  }
  const text = JSON.stringify(body);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy();
}

/** Fastify's routing errors (a malformed percent-encoding in the path, a path parameter above maxParamLength), in the envelope. */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
  void reply
    .status(tooLong ? 414 : 400)
    .header('x-request-id', request.id)
    .header('content-type', 'application/json; charset=utf-8')
    .send(tooLong ? envelope('uri_too_long', 'A path segment of the URL is too long') : envelope('bad_request', 'The URL is not valid'));
}

/** The URL and query limits, and JSON as the only body type. Registered on the Fastify instance before the routes. */
export function registerInputLimits(fastify: FastifyInstance): void {
  // The API takes JSON only. Fastify would hand a text/plain body to the handlers as a string, and a
  // form body would parse into the same object as its JSON: both answer 415 instead.
  fastify.removeContentTypeParser('text/plain');
  fastify.addContentTypeParser('application/x-www-form-urlencoded', (_request, _payload, done) => {
    done(Object.assign(new Error('Unsupported Media Type: send the body as application/json'), { statusCode: 415 }), undefined);
  });
  fastify.addHook('onRequest', async (request, reply) => {
    if (request.url.length > MAX_URL_LENGTH) {
      return reply.status(414).send(envelope('uri_too_long', `The URL exceeds ${MAX_URL_LENGTH} characters`));
    }
    const query = request.query as Record<string, unknown> | undefined;
    if (query === undefined || query === null) return;
    const names = Object.keys(query);
    if (names.length > MAX_QUERY_PARAMETERS) {
      return reply.status(422).send(envelope('validation_failed', 'The request is invalid', { fields: [{ field: 'query', message: `at most ${MAX_QUERY_PARAMETERS} query parameters` }] }));
    }
    for (const name of names) {
      const values = ([] as unknown[]).concat(query[name]);
      if (values.length > MAX_QUERY_PARAMETERS || values.some((value) => typeof value === 'string' && value.length > MAX_QUERY_VALUE_LENGTH)) {
        // The parameter's name is the caller's text: bounded, and never its value.
        const field = name.slice(0, 50);
        return reply.status(422).send(envelope('validation_failed', 'The request is invalid', { fields: [{ field, message: `must be at most ${MAX_QUERY_VALUE_LENGTH} characters` }] }));
      }
    }
  });
}
