import type { FastifyInstance } from 'fastify';
import type { ApiKeyGuard } from '../auth/api-key.guard.js';
import { sendError } from '../common/error.filter.js';
import { InvariantViolated } from '../common/errors.js';
import { parseScope } from './verification-inputs.js';

/**
 * `POST /v1/` (trailing slash) is "no scope" too, but the router treats it as a path of its own:
 * answer it like `POST /v1`, key first, then 422.
 */
export function registerNoScopeRoute(fastify: FastifyInstance, guard: ApiKeyGuard): void {
  fastify.post('/v1/', async (request, reply) => {
    try {
      await guard.admit(request, reply);
      parseScope(undefined);
    } catch (error) {
      return sendError(reply, error);
    }
    throw new InvariantViolated('a missing scope must be refused');
  });
}
