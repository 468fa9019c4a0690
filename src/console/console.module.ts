import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { ApiKeyGuard } from '../auth/api-key.guard.js';
import { ConsoleAuthModule } from '../console-auth/console-auth.module.js';
import { VerificationsModule } from '../verifications/verifications.module.js';
import { ConsoleAccountsController } from './console-accounts.controller.js';
import { ConsoleIntegratorController } from './console-integrator.controller.js';
import { ConsoleOperatorController } from './console-operator.controller.js';
import { WalletsModule } from '../wallets/wallets.module.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { ConsoleWebhooksController } from './console-webhooks.controller.js';
import { ConsoleDataSubjectsController } from './console-data-subjects.controller.js';
import { ConsolePaymentsController, ConsoleStatementsController, ConsoleTopUpsController } from './console-topups.controller.js';
import { PaymentsModule } from '../payments/payments.module.js';
import { ConsoleLinks } from './console-links.js';
import { ConsoleSessions } from './console-session.service.js';
import { SignUps } from './sign-ups.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { ConsoleSecondFactorController } from './console-second-factor.controller.js';
import { ConsoleSecondFactors } from './console-second-factor.service.js';

/** The console's server side under /console/api (the pages themselves are static files served apart). */
@Module({
  imports: [CqrsModule, ConsoleAuthModule, OrganizationsModule, VerificationsModule, WalletsModule, WebhooksModule, PaymentsModule],
  controllers: [
    ConsoleAccountsController,
    ConsoleIntegratorController,
    ConsoleOperatorController,
    ConsoleWebhooksController,
    ConsoleSecondFactorController,
    ConsoleDataSubjectsController,
    ConsoleTopUpsController,
    ConsoleStatementsController,
    ConsolePaymentsController,
  ],
  providers: [ConsoleLinks, ConsoleSessions, SignUps, ConsoleSecondFactors, ApiKeyGuard],
})
export class ConsoleModule {}
