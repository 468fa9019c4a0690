import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { CqrsModule } from '@nestjs/cqrs';
import { ApiKeyGuard } from '../auth/api-key.guard.js';
import { AppError, InvariantViolated } from '../common/errors.js';
import { parseScope } from './verification-inputs.js';
import { PortraitsModule } from '../portraits/portraits.module.js';
import { ProvidersModule } from '../providers/providers.module.js';
import { WalletsModule } from '../wallets/wallets.module.js';
import { GetVerificationHandler, ListVerificationsHandler } from './verification.queries.js';
import { VerificationStreams } from './verification.stream.js';
import { VerificationRecovery } from './recovery.js';
import { InFlightChecks, RunVerificationHandler } from './run-verification.handler.js';
import { VerificationsController } from './verifications.controller.js';

@Module({
  imports: [CqrsModule, WalletsModule, PortraitsModule, ProvidersModule],
  controllers: [VerificationsController],
  providers: [ApiKeyGuard, VerificationStreams, InFlightChecks, RunVerificationHandler, GetVerificationHandler, ListVerificationsHandler, VerificationRecovery],
  exports: [VerificationRecovery, VerificationStreams],
})
export class VerificationsModule implements OnModuleInit {
  constructor(
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
    @Inject(ApiKeyGuard) private readonly guard: ApiKeyGuard,
  ) {}

  /**
   * `POST /v1/` (trailing slash) is "no scope" too, but the router treats it as a path of its own:
   * answer it like `POST /v1`, key first, then 422.
   */
  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance() as FastifyInstance | undefined;
    fastify?.post('/v1/', async (request, reply) => {
      try {
        await this.guard.admit(request, reply);
        parseScope(undefined);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        return reply.status(error.httpStatus).send({ status: false, error: { code: error.code, message: error.message, details: error.details } });
      }
      throw new InvariantViolated('a missing scope must be refused');
    });
  }
}
