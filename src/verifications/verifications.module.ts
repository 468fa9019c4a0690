import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { CqrsModule } from '@nestjs/cqrs';
import { ApiKeyGuard } from '../auth/api-key.guard.js';
import { PortraitsModule } from '../portraits/portraits.module.js';
import { ProvidersModule } from '../providers/providers.module.js';
import { WalletsModule } from '../wallets/wallets.module.js';
import { GetVerificationHandler, ListVerificationsHandler } from './verification.queries.js';
import { VerificationStreams } from './verification.stream.js';
import { PersonalFields } from './verification.codec.js';
import { DataProtectionModule } from '../data-protection/data-protection.module.js';
import { VerificationRecovery } from './recovery.js';
import { RecoveryController } from './recovery.controller.js';
import { InFlightChecks } from './in-flight-checks.js';
import { RunVerificationHandler } from './run-verification.handler.js';
import { VerificationsController } from './verifications.controller.js';
import { ErasureController } from './erasure.controller.js';
import { PersonalDataErasure } from './erasure.js';
import { RetentionSweep } from './retention.js';
import { registerNoScopeRoute } from './no-scope.route.js';

@Module({
  imports: [CqrsModule, DataProtectionModule, WalletsModule, PortraitsModule, ProvidersModule],
  controllers: [VerificationsController, ErasureController, RecoveryController],
  providers: [ApiKeyGuard, PersonalFields, VerificationStreams, InFlightChecks, RunVerificationHandler, GetVerificationHandler, ListVerificationsHandler, VerificationRecovery, PersonalDataErasure, RetentionSweep],
  exports: [VerificationRecovery, VerificationStreams, PersonalDataErasure, RetentionSweep],
})
export class VerificationsModule implements OnModuleInit {
  constructor(
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
    @Inject(ApiKeyGuard) private readonly guard: ApiKeyGuard,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance() as FastifyInstance | undefined;
    if (fastify !== undefined) registerNoScopeRoute(fastify, this.guard);
  }
}
