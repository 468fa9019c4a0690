import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LoggerService } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { AppModule } from './app.module.js';
import type { Runtime } from './core.module.js';
import { runMigrations } from './database/data-source.js';
import { setupOpenApi } from './openapi.js';

/** Request bodies above this are refused with 413 before any parsing (face_match images included). */
export const BODY_LIMIT_BYTES = 2 * 1024 * 1024;

export interface CreateAppOptions {
  readonly logger?: LoggerService | false;
}

/** Builds the HTTP application (migrated database, all modules) without listening. Used by main and by the e2e tests. */
export async function createApp(runtime: Runtime, options: CreateAppOptions = {}): Promise<NestFastifyApplication> {
  await runMigrations(runtime.databaseUrl);
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { maxParamLength: 200 },
    trustProxy: false,
    // A caller's X-Request-Id is kept when it is a plain token, so its logs and ours line up.
    genReqId: (request: IncomingMessage) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && /^[A-Za-z0-9._:-]{8,128}$/.test(given) ? given : randomUUID();
    },
  });
  adapter.getInstance().addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(runtime), adapter, {
    logger: options.logger ?? ['error', 'warn', 'log'],
    abortOnError: false,
  });
  setupOpenApi(app);
  await app.init();
  return app;
}
