import { WalletsModule } from '../wallets/wallets.module.js';
import { SandboxCreditSweep } from './sandbox-credit.js';
import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { FirstRun } from './first-run.js';
import { IssueApiKeyHandler, RevokeApiKeyHandler } from './api-key.handlers.js';
import {
  ApproveOrganizationHandler,
  RequestLiveAccessHandler,
  ReinstateOrganizationHandler,
  SetActiveScopesHandler,
  RenameOrganizationHandler,
  SetRateLimitHandler,
  SetRetentionHandler,
  DestroyPersonalDataHandler,
  SetScopePricesHandler,
  SuspendOrganizationHandler,
} from './organization-lifecycle.handlers.js';
import { GetConsoleOrganizationHandler, GetOrganizationHandler, ListApiKeysHandler, ListOrganizationsHandler, SearchOrganizationsHandler } from './organization.queries.js';
import { OrganizationStore } from './organization.store.js';
import { OrganizationsController } from './organizations.controller.js';
import { RegisterOrganizationHandler } from './register-organization.handler.js';
import { ConfigureProviderHandler } from './configure-provider.handler.js';
import { ProvidersModule } from '../providers/providers.module.js';
import { ConsoleAuthModule } from '../console-auth/console-auth.module.js';
import { ConsoleOrganizationsController } from './console-organizations.controller.js';

const COMMAND_HANDLERS = [
  RegisterOrganizationHandler,
  ApproveOrganizationHandler,
  RequestLiveAccessHandler,
  SuspendOrganizationHandler,
  ReinstateOrganizationHandler,
  SetActiveScopesHandler,
  SetScopePricesHandler,
  RenameOrganizationHandler,
  SetRateLimitHandler,
  SetRetentionHandler,
  DestroyPersonalDataHandler,
  IssueApiKeyHandler,
  RevokeApiKeyHandler,
  ConfigureProviderHandler,
];
const QUERY_HANDLERS = [GetOrganizationHandler, ListOrganizationsHandler, ListApiKeysHandler, GetConsoleOrganizationHandler, SearchOrganizationsHandler];

@Module({
  imports: [CqrsModule, WalletsModule, ProvidersModule, ConsoleAuthModule],
  controllers: [OrganizationsController, ConsoleOrganizationsController],
  providers: [OrganizationStore, SandboxCreditSweep, ...COMMAND_HANDLERS, ...QUERY_HANDLERS, FirstRun],
  exports: [OrganizationStore, SandboxCreditSweep],
})
export class OrganizationsModule {}
