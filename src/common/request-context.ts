import type { FastifyRequest } from 'fastify';
import type { Actor, CommandContext } from './event.js';

/** The correlation id of every event a request causes: the request id, echoed as X-Request-Id. */
export function commandContext(request: FastifyRequest, actor: Actor): CommandContext {
  return { correlationId: String(request.id), actor };
}
