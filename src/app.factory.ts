import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { AppModule } from './app.module.js';
import { assertServesHttp, type AppConfig } from './config/config.js';
import type { Runtime } from './config/runtime.js';
import { echoedRequestId, hashCallerRequestId } from './common/request-context.js';
import { parseKey } from './portraits/portrait.store.js';
import { registerSecurityHeaders } from './common/security-headers.js';
import { clientErrorHandler, frameworkErrorHandler, MAX_HEADER_BYTES, registerInputLimits } from './common/input-limits.js';
import { runMigrations } from './database/data-source.js';
import { refuseWhileDraining } from './lifecycle/graceful-shutdown.js';
import { createLogger } from './logging/logger.js';
import { PinoNestLogger } from './logging/nest-logger.js';
import { registerRequestLogging } from './logging/request-log.js';
import { instrumentHttp, serveMetrics } from './metrics/http-metrics.js';
import { buildOpenApiDocument, setupOpenApi } from './openapi.js';
import { registerRouteTable } from './common/route-table.js';
import { registerConsoleStatic } from './console/console-static.js';
import { registerFaceModelsStatic } from './face-checks/face-models-static.js';
import { LegacyContactSealing } from './console-auth/legacy-contacts.js';

/** Request bodies above this are refused with 413 before any parsing (face_match images included). */
export const BODY_LIMIT_BYTES = 2 * 1024 * 1024;

export interface CreateAppOptions {
  /** The process's pino logger (src/logging/logger.ts); by default one on stdout at LOG_LEVEL. */
  readonly logger?: Logger;
}

function corsOptions(config: AppConfig) {
  return {
    origin: [...config.operations.corsOrigins],
    methods: ['GET', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: ['Content-Type', 'X-Service-Key', 'X-Request-Id', 'X-Consistency-Token', 'Authorization'],
    exposedHeaders: ['X-Request-Id', 'Retry-After', 'X-Consistency-Token'],
    credentials: false,
    maxAge: 600,
  };
}

/**
 * TRUST_PROXY for Fastify. A hop count trusts the nearest `hops` addresses whoever they are (Fastify
 * itself now refuses a bare number, which cannot check the immediate peer): right only where the
 * service cannot be reached but through those proxies; address ranges are checked, and preferred.
 */
function trustedProxies(trust: AppConfig['operations']['trustProxy']): false | string[] | ((address: string, hop: number) => boolean) {
  if (trust === false) return false;
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return [...trust];
}

/** Builds the HTTP application (migrated database, all modules) without listening. Used by main and by the e2e tests. */
export async function createApp(runtime: Runtime, options: CreateAppOptions = {}): Promise<NestFastifyApplication> {
  const { config } = runtime;
  assertServesHttp(config);
  const logger = options.logger ?? createLogger(config);
  await runMigrations(runtime.databaseUrl, { log: (message) => logger.warn(message) });
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    // A slow or stalled client (headers dribbled, a body shorter than its Content-Length) gets 408
    // within these limits instead of holding a connection forever. Node looks for expired requests
    // every connectionsCheckingInterval (30 s by default, too coarse for the limits).
    http: {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: config.operations.headersTimeoutMs,
      requestTimeout: config.operations.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, Math.floor(config.operations.headersTimeoutMs / 4)),
    },
    // Fastify sets this on the server after creating it (0, no limit, by default): the same value.
    requestTimeout: config.operations.requestTimeoutMs,
    // The headers limit counts from a connection's first byte wanted, but on a kept-alive connection
    // Node restarts it only when the next request's first byte arrives: until then the idle
    // connection lasts keepAliveTimeout (Fastify's 72 s). The same bound for both, so a client that
    // goes quiet after one request cannot hold a connection longer than one that never spoke. A
    // proxy in front must close its idle upstream connections sooner (or the limit be raised).
    keepAliveTimeout: config.operations.headersTimeoutMs,
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler,
    routerOptions: { maxParamLength: 200 },
    // Behind a reverse proxy, request.ip and request.protocol are the client's, as the trusted hops forward them.
    trustProxy: trustedProxies(config.operations.trustProxy),
    // No Nest middleware: request logging and security headers are Fastify hooks, so the Express
    // middleware layer (@fastify/middie) need not run on every request.
    skipMiddie: true,
    // The server's own id, whatever the caller sends: it is every log line's requestId (request-log.ts)
    // and every event's correlation id, and a caller's X-Request-Id may carry personal data. The
    // caller's id is echoed in the answer and shown on the request's own log line only.
    genReqId: () => randomUUID(),
  });
  const fastify = adapter.getInstance();
  // First, so that every later hook and handler of a request logs with its id.
  registerRequestLogging(fastify, logger);
  // Before the hooks that may answer early (draining, input limits), so their answers carry the
  // headers too, and before any route, so that /docs can set its own (openapi.ts).
  registerSecurityHeaders(fastify);
  refuseWhileDraining(fastify);
  registerInputLimits(fastify);
  const hashKey = config.dataProtection.requestIdHashKey;
  if (hashKey !== undefined) {
    const key = parseKey(hashKey, 'REQUEST_ID_HASH_KEY');
    fastify.addHook('onRequest', (request, _reply, done) => {
      hashCallerRequestId(request, key);
      done();
    });
  }
  // After the input limits (a query they refuse is theirs to name), before any route is registered.
  const routes = registerRouteTable(fastify);
  fastify.addHook('onSend', (request, reply, payload, done) => {
    void reply.header('x-request-id', echoedRequestId(request));
    done(null, payload);
  });
  instrumentHttp(fastify);
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(runtime), adapter, {
    bufferLogs: true,
    abortOnError: false,
    // Fastify's own JSON parser (bodyLimit, prototype-poisoning checks), behind the depth and text guard of input-limits.ts, is the only body parser.
    bodyParser: false,
  });
  app.useLogger(new PinoNestLogger(logger));
  // Browsers get no CORS headers unless CORS_ORIGINS lists their origin.
  if (config.operations.corsOrigins.length > 0) app.enableCors(corsOptions(config));
  if (config.operations.docsEnabled) setupOpenApi(app);
  if (config.operations.metricsEnabled) serveMetrics(fastify);
  // The console's pages and assets at /console (its API, /console/api, is the console module's).
  registerConsoleStatic(fastify);
  // The face models the hosted page's camera guide loads, at /verify/models/<library version>/.
  registerFaceModelsStatic(fastify);
  await app.init();
  // The query parameters each operation takes, as the document states them.
  routes.useDocument(buildOpenApiDocument(app));
  // The server seals contact data older versions stored in clear, in the background (the CLIs do not).
  app.get(LegacyContactSealing).start();
  return app;
}
