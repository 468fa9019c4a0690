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
import { ConsoleLinks } from './console-links.js';
import { ConsoleSessions } from './console-session.service.js';

/** The console's server side under /console/api (the pages themselves are static files served apart). */
@Module({
  imports: [CqrsModule, ConsoleAuthModule, VerificationsModule, WalletsModule, WebhooksModule],
  controllers: [ConsoleAccountsController, ConsoleIntegratorController, ConsoleOperatorController, ConsoleWebhooksController],
  providers: [ConsoleLinks, ConsoleSessions, ApiKeyGuard],
})
export class ConsoleModule {}
