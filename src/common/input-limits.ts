import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorEnvelope } from './envelope.js';
import { ValidationFailed, type FieldError } from './errors.js';
import { API_SECURITY_HEADERS } from './security-headers.js';
import { echoedRequestId } from './request-context.js';

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
/** Far deeper than any body the API takes (a provider's fallback credentials are three levels down). */
export const MAX_JSON_DEPTH = 32;
/** How much of a field's path an error names: the names are the caller's text. */
const MAX_FIELD_PATH = 100;

/**
 * Text PostgreSQL cannot store: NUL (refused in `text` and `jsonb`) and UTF-16 surrogates that are
 * not part of a pair (JSON.stringify writes them as `\ud800` escapes, which `jsonb` refuses).
 * Without the `u` flag the pattern sees code units, so a well-formed pair matches neither branch.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_MESSAGE = 'must not contain NUL characters or unpaired UTF-16 surrogates';

export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && !LONE_SURROGATE.test(text);
}

function fieldPath(parent: string, key: string | number): string {
  const path = typeof key === 'number' ? `${parent}[${key}]` : parent === '' ? key : `${parent}.${key}`;
  return path.slice(0, MAX_FIELD_PATH);
}

/**
 * The first problem of a parsed JSON body that no route may see: containers nested deeper than
 * MAX_JSON_DEPTH (a recursive validator would overflow the stack on them), or a string or a key
 * PostgreSQL cannot store. The walk is iterative, so no body can overflow it; an unstorable key is
 * reported as its parent (`body` at the top), never echoed.
 */
export function jsonBodyProblem(body: unknown): FieldError | undefined {
  if (typeof body === 'string') return isStorableText(body) ? undefined : { field: 'body', message: UNSTORABLE_MESSAGE };
  const pending: { value: unknown; path: string; depth: number }[] = [{ value: body, path: '', depth: 1 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, path, depth } = next;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_JSON_DEPTH) return { field: 'body', message: `must not be nested deeper than ${MAX_JSON_DEPTH} levels` };
    const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((item, index) => [index, item]) : Object.entries(value);
    for (const [key, item] of entries) {
      if (typeof key === 'string' && !isStorableText(key)) return { field: path === '' ? 'body' : path, message: `has a field name that ${UNSTORABLE_MESSAGE}` };
      if (typeof item === 'string') {
        if (!isStorableText(item)) return { field: fieldPath(path, key), message: UNSTORABLE_MESSAGE };
      } else if (typeof item === 'object' && item !== null) {
        pending.push({ value: item, path: fieldPath(path, key), depth: depth + 1 });
      }
    }
  }
  return undefined;
}

function envelope(code: string, message: string, details: Record<string, unknown> = {}): ErrorEnvelope {
  return { status: false, error: { code, message, details } };
}

/** The API's security headers as raw header lines, for the answers written straight to the socket. */
const SECURITY_HEADER_LINES = Object.entries(API_SECURITY_HEADERS)
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('');

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
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${SECURITY_HEADER_LINES}Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy();
}

/** Fastify's routing errors (a malformed percent-encoding in the path, a path parameter above maxParamLength), in the envelope. */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
  // Routing failed, so no route's hooks run: the security headers are set here.
  void reply
    .headers(API_SECURITY_HEADERS)
    .status(tooLong ? 414 : 400)
    .header('x-request-id', echoedRequestId(request))
    .header('content-type', 'application/json; charset=utf-8')
    .send(tooLong ? envelope('uri_too_long', 'A path segment of the URL is too long') : envelope('bad_request', 'The URL is not valid'));
}

/** The first path parameter or query value PostgreSQL could not store (a `%00` decodes to NUL). */
function unstorableParameter(request: FastifyRequest): FieldError | undefined {
  const params = request.params as Record<string, unknown> | undefined;
  for (const [name, value] of Object.entries(params ?? {})) {
    if (typeof value === 'string' && !isStorableText(value)) return { field: name.slice(0, 50), message: UNSTORABLE_MESSAGE };
  }
  const query = request.query as Record<string, unknown> | undefined;
  for (const [name, value] of Object.entries(query ?? {})) {
    const values = ([] as unknown[]).concat(value);
    if (!isStorableText(name) || values.some((item) => typeof item === 'string' && !isStorableText(item))) {
      return { field: isStorableText(name) ? name.slice(0, 50) : 'query', message: UNSTORABLE_MESSAGE };
    }
  }
  return undefined;
}

/** Routes whose handlers get the body's exact text as `rawBody` beside the parsed body. */
const RAW_BODY_PREFIX = '/payments/';
/** The sandbox checkout page's buttons are plain HTML forms (their bodies carry nothing and are ignored). */
const FORM_PREFIX = '/payments/sandbox/checkout/';

export interface RawBodyRequest extends FastifyRequest {
  rawBody?: string;
}

/**
 * Fastify's own JSON parser (its prototype-poisoning checks, its 400 for malformed or empty JSON),
 * followed by jsonBodyProblem: one guard for every route's body, before any validator runs.
 */
function registerJsonBodyGuard(fastify: FastifyInstance): void {
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // A payment webhook's signature is over its exact bytes: those routes keep them, and check the
    // signature before anything of the body is judged, so an unsigned body that is not JSON is 401
    // like any other unsigned body (the handler parses the text once the signature holds).
    const raw = request.url.startsWith(RAW_BODY_PREFIX);
    if (raw) (request as RawBodyRequest).rawBody = body as string;
    void parseJson(request, body as string, (error, value) => {
      if (error !== null && error !== undefined) {
        done(raw ? null : error, undefined);
        return;
      }
      const problem = jsonBodyProblem(value);
      if (problem === undefined || raw) done(null, problem === undefined ? value : undefined);
      else done(new ValidationFailed([problem]), undefined);
    });
  });
}

/** The URL and query limits, and JSON as the only body type. Registered on the Fastify instance before the routes. */
export function registerInputLimits(fastify: FastifyInstance): void {
  registerJsonBodyGuard(fastify);
  // The API takes JSON only. Fastify would hand a text/plain body to the handlers as a string, and a
  // form body would parse into the same object as its JSON: both answer 415 instead.
  fastify.removeContentTypeParser('text/plain');
  fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (request, _body, done) => {
    if (request.url.startsWith(FORM_PREFIX) && request.method === 'POST') {
      done(null, {});
      return;
    }
    done(Object.assign(new Error('Unsupported Media Type: send the body as application/json'), { statusCode: 415 }), undefined);
  });
  // Callback style, not async: an async hook costs every request a promise and a turn of the microtask queue.
  fastify.addHook('onRequest', (request, reply, done) => {
    const refusal = inputLimitRefusal(request);
    if (refusal === undefined) done();
    else void reply.status(refusal.status).send(refusal.body);
  });
}

/** The answer to a request whose URL or query exceeds the limits, or undefined when it keeps within them. */
function inputLimitRefusal(request: FastifyRequest): { status: number; body: ErrorEnvelope } | undefined {
  if (request.url.length > MAX_URL_LENGTH) return { status: 414, body: envelope('uri_too_long', `The URL exceeds ${MAX_URL_LENGTH} characters`) };
  const query = (request.query ?? {}) as Record<string, unknown>;
  const names = Object.keys(query);
  if (names.length > MAX_QUERY_PARAMETERS) {
    return {
      status: 422,
      body: envelope('validation_failed', 'The request is invalid', { fields: [{ field: 'query', message: `at most ${MAX_QUERY_PARAMETERS} query parameters` }] }),
    };
  }
  for (const name of names) {
    const values = ([] as unknown[]).concat(query[name]);
    if (values.length > MAX_QUERY_PARAMETERS || values.some((value) => typeof value === 'string' && value.length > MAX_QUERY_VALUE_LENGTH)) {
      // The parameter's name is the caller's text: bounded, and never its value.
      const field = name.slice(0, 50);
      return {
        status: 422,
        body: envelope('validation_failed', 'The request is invalid', { fields: [{ field, message: `must be at most ${MAX_QUERY_VALUE_LENGTH} characters` }] }),
      };
    }
  }
  const unstorable = unstorableParameter(request);
  return unstorable === undefined ? undefined : { status: 422, body: envelope('validation_failed', 'The request is invalid', { fields: [unstorable] }) };
}
