import type { ArgumentsHost } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ErrorFilter } from './error.filter.js';

const filter = new ErrorFilter();

/**
 * Answers an error on a route Nest does not run (a route registered on Fastify itself) exactly as
 * the exception filter answers it on Nest's routes, so the envelope has one mapping.
 */
export function sendError(reply: FastifyReply, error: unknown): FastifyReply {
  const host = { switchToHttp: () => ({ getResponse: () => reply }) } as unknown as ArgumentsHost;
  filter.catch(error, host);
  return reply;
}
