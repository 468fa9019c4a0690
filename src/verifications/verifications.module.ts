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
import { checkWriterProvider } from './check-writer.js';
import { VerificationsController } from './verifications.controller.js';
import { ErasureController } from './erasure.controller.js';
import { DataSubjectsController } from './data-subjects.controller.js';
import { AdminDataSubjectsController } from './admin-data-subjects.controller.js';
import { DataSubjectRights } from './data-subject-rights.js';
import { PersonalDataErasure } from './erasure.js';
import { RetentionSweep } from './retention.js';
import { registerNoScopeRoute } from './no-scope.route.js';

@Module({
  imports: [CqrsModule, DataProtectionModule, WalletsModule, PortraitsModule, ProvidersModule],
  controllers: [VerificationsController, ErasureController, DataSubjectsController, AdminDataSubjectsController, RecoveryController],
  providers: [
    ApiKeyGuard,
    PersonalFields,
    VerificationStreams,
    InFlightChecks,
    checkWriterProvider,
    RunVerificationHandler,
    GetVerificationHandler,
    ListVerificationsHandler,
    VerificationRecovery,
    PersonalDataErasure,
    DataSubjectRights,
    RetentionSweep,
  ],
  exports: [VerificationRecovery, VerificationStreams, PersonalDataErasure, DataSubjectRights, RetentionSweep],
})
export class VerificationsModule implements OnModuleInit {
  constructor(
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
    @Inject(ApiKeyGuard) private readonly guard: ApiKeyGuard,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (fastify !== undefined) registerNoScopeRoute(fastify, this.guard);
  }
}
