import { Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { FirstRun } from '../admin/first-run.js';
import { IssueApiKeyHandler, RevokeApiKeyHandler } from './api-key.handlers.js';
import {
  ApproveOrganizationHandler,
  ReinstateOrganizationHandler,
  SetActiveScopesHandler,
  SetScopePricesHandler,
  SuspendOrganizationHandler,
} from './organization-lifecycle.handlers.js';
import { GetOrganizationHandler, ListApiKeysHandler, ListOrganizationsHandler } from './organization.queries.js';
import { OrganizationStore } from './organization.store.js';
import { OrganizationsController } from './organizations.controller.js';
import { RegisterOrganizationHandler } from './register-organization.handler.js';

const COMMAND_HANDLERS = [
  RegisterOrganizationHandler,
  ApproveOrganizationHandler,
  SuspendOrganizationHandler,
  ReinstateOrganizationHandler,
  SetActiveScopesHandler,
  SetScopePricesHandler,
  IssueApiKeyHandler,
  RevokeApiKeyHandler,
];
const QUERY_HANDLERS = [GetOrganizationHandler, ListOrganizationsHandler, ListApiKeysHandler];

@Module({
  imports: [CqrsModule],
  controllers: [OrganizationsController],
  providers: [OrganizationStore, ...COMMAND_HANDLERS, ...QUERY_HANDLERS, FirstRun],
  exports: [OrganizationStore],
})
export class OrganizationsModule {}
