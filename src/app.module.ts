import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { ErrorFilter } from './common/error.filter.js';
import type { Runtime } from './config/runtime.js';
import { CoreModule } from './core.module.js';
import { AuditModule } from './audit/audit.module.js';
import { AuthModule } from './auth/auth.module.js';
import { HealthModule } from './health/health.module.js';
import { RateLimitsModule } from './rate-limits/rate-limits.module.js';
import { OrganizationsModule } from './organizations/organizations.module.js';
import { VerificationsModule } from './verifications/verifications.module.js';
import { WalletsModule } from './wallets/wallets.module.js';
import { ConsoleModule } from './console/console.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';
import { PaymentsModule } from './payments/payments.module.js';
import { VerificationFlowsModule } from './verification-flows/verification-flows.module.js';
import { ProjectionsModule } from '../projections/projections.module.js';

@Module({})
export class AppModule {
  static forRoot(runtime: Runtime): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CoreModule.forRoot(runtime),
        CqrsModule.forRoot(),
        AuthModule,
        HealthModule,
        RateLimitsModule,
        ProjectionsModule,
        OrganizationsModule,
        WalletsModule,
        AuditModule,
        VerificationsModule,
        ConsoleModule,
        WebhooksModule,
        PaymentsModule,
        VerificationFlowsModule,
      ],
      providers: [{ provide: APP_FILTER, useClass: ErrorFilter }],
    };
  }
}
