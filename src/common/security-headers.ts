import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import { asError } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route's own security headers (helmetHeaders), instead of the API's. */
    securityHeaders?: SecurityHeaders;
  }
}

export type SecurityHeaders = Readonly<Record<string, string>>;

/**
 * The API answers JSON only, so its responses may load nothing, run nothing and be framed by
 * nobody. The /docs page relaxes this on its own routes (openapi.ts).
 */
export const API_HELMET_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] },
  },
  crossOriginResourcePolicy: { policy: 'same-origin' },
  frameguard: { action: 'deny' },
};

/**
 * The headers helmet sets for these options, worked out once: with no per-request directive (no
 * nonces, no functions) they depend on nothing in the request, so running helmet's middleware on
 * every request (as @fastify/helmet does) would rebuild the same strings each time.
 */
export function helmetHeaders(options: HelmetOptions): SecurityHeaders {
  const headers: Record<string, string> = {};
  const response = {
    // Lower case, as Fastify keeps header names (it lowers each name it is given).
    setHeader: (name: string, value: string) => {
      headers[name.toLowerCase()] = value;
    },
    removeHeader: (name: string) => {
      delete headers[name.toLowerCase()];
    },
  };
  let finished = false;
  helmet(options)({} as never, response as never, (error?: unknown) => {
    if (error !== undefined) throw asError(error);
    finished = true;
  });
  if (!finished) throw new Error('invariant: helmet did not set its headers synchronously');
  return headers;
}

/**
 * The API's security headers: also written by the answers given before any hook runs (input-limits.ts).
 * Its answers carry personal data (checks, data subjects, organizations' contacts) or secrets (a new
 * key), so none may be kept by a browser or a shared cache; a route whose answer may be (the
 * console's assets, the docs' scripts) sets its own Cache-Control over this one.
 */
export const API_SECURITY_HEADERS: SecurityHeaders = { ...helmetHeaders(API_HELMET_OPTIONS), 'cache-control': 'no-store' };

/**
 * Every response gets the API's security headers, or its route's own (`config.securityHeaders`).
 * Registered before every other onRequest hook, so that the answers those hooks give (414, the
 * query limits' 422, 503 while draining) carry them too.
 */
export function registerSecurityHeaders(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.headers(request.routeOptions.config.securityHeaders ?? API_SECURITY_HEADERS);
    done();
  });
}
