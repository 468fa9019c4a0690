import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ReadYourWrites } from '../read-models/read-your-writes.js';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type pg from 'pg';
import { Forbidden, NotFound } from '../common/errors.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import type { OrganizationStatus } from '../common/organization-status.js';
import { paging } from '../common/paging.js';
import { commandContext } from '../common/request-context.js';
import { validateBody } from '../common/validation.js';
import { PG_POOL } from '../database/pool.js';
import { AccountStore } from '../console-auth/accounts.js';
import { ConsoleAccess, consoleIdentity, ConsoleGuard, organizationOf, userActor, type ConsoleRequest } from '../console-auth/console.guard.js';
import { readWalletBalance, WALLETS_PROJECTION } from '../wallets/wallet.read-model.js';
import type { WalletBalance } from '../wallets/wallet-ledger.port.js';
import {
  ApproveOrganization,
  ConfigureProvider,
  IssueApiKey,
  ReinstateOrganization,
  RequestLiveAccess,
  RevokeApiKey,
  RenameOrganization,
  SetActiveScopes,
  SetRateLimit,
  SetScopePrices,
  SuspendOrganization,
} from './organization.commands.js';
import { IssueApiKeyDto, OrganizationNameDto, pricesBody, providerBody, rateLimitBody, SetScopesDto, SuspendOrganizationDto } from './organization.dto.js';
import { SCOPES } from '../scopes/scopes.js';
import { GetConsoleOrganization, ListApiKeys, SearchOrganizations, type ConsoleOrganizationView } from './organization.queries.js';
import type { ApiKeyView, IssuedApiKeyView } from './organization.views.js';
import { ConsoleRoute, jsonBody, list } from '../common/console-route.js';
import { ref } from '../common/openapi.js';

const STATUSES: readonly OrganizationStatus[] = ['pending', 'approved', 'suspended'];

/**
 * The console's endpoints over organizations and keys, for integrators (their own organization)
 * and operators (every one). The same commands and queries as the admin API: the console adds
 * only who may call them, and the user as the events' actor.
 */
@Controller('console/api')
@UseGuards(ConsoleGuard)
export class ConsoleOrganizationsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(AccountStore) private readonly accounts: AccountStore,
    @Inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
  ) {}

  // The integrator's own organization.

  @Get('organization')
  @ConsoleAccess({ who: 'integrator', roles: ['owner', 'developer', 'finance'] })
  @ConsoleRoute('getOrganization', 'Organization', "The user's organization", { status: 200, data: ref('ConsoleOrganization') })
  async organization(@Req() request: ConsoleRequest): Promise<SuccessEnvelope<ConsoleOrganizationView>> {
    return ok(await this.queries.execute(new GetConsoleOrganization(organizationOf(consoleIdentity(request).user))));
  }

  /** The owner asks for live access; an operator approves it from the approval queue. Needs a confirmed email. */
  @Post('organization/live-access')
  @HttpCode(200)
  @ConsoleAccess({ who: 'integrator', roles: ['owner'] })
  @ConsoleRoute('requestLiveAccess', 'Organization', 'Ask the operators for live access', { status: 200, data: ref('ConsoleOrganization') })
  async requestLiveAccess(@Req() request: ConsoleRequest): Promise<SuccessEnvelope<ConsoleOrganizationView>> {
    const { user } = consoleIdentity(request);
    if (user.emailVerifiedAt === null) throw new Forbidden('email_not_verified', 'Confirm your email address first (see the mail we sent)');
    const organizationId = organizationOf(user);
    await this.commands.execute(new RequestLiveAccess(organizationId, commandContext(request, userActor(user))));
    return ok(await this.queries.execute(new GetConsoleOrganization(organizationId)));
  }

  @Get('keys')
  @ConsoleAccess({ who: 'integrator', roles: ['owner', 'developer'] })
  @ConsoleRoute('listKeys', 'Organization', "The organization's API keys", { status: 200, data: list(ref('ApiKey')) })
  async keys(@Req() request: ConsoleRequest): Promise<SuccessEnvelope<ApiKeyView[]>> {
    return ok(await this.queries.execute(new ListApiKeys(organizationOf(consoleIdentity(request).user))));
  }

  @Post('keys')
  @HttpCode(201)
  @ConsoleAccess({ who: 'integrator', roles: ['owner', 'developer'] })
  @ConsoleRoute('issueKey', 'Organization', 'Issue an API key: the key, shown once', { status: 201, data: ref('IssuedApiKey') }, jsonBody(ref('NewApiKey')))
  async issueKey(@Req() request: ConsoleRequest, @Body() body: unknown): Promise<SuccessEnvelope<IssuedApiKeyView>> {
    const { user } = consoleIdentity(request);
    return ok(await this.issue(request, organizationOf(user), body));
  }

  @Delete('keys/:keyId')
  @ConsoleAccess({ who: 'integrator', roles: ['owner', 'developer'] })
  @ConsoleRoute('revokeKey', 'Organization', 'Revoke an API key', { status: 200, data: ref('ApiKey') })
  async revokeKey(@Req() request: ConsoleRequest, @Param('keyId') keyId: string): Promise<SuccessEnvelope<ApiKeyView>> {
    const { user } = consoleIdentity(request);
    const keys = await this.queries.execute(new ListApiKeys(organizationOf(user)));
    if (!keys.some((key) => key.id === keyId)) throw new NotFound('No key with that id in your organization');
    return ok(await this.commands.execute(new RevokeApiKey(keyId, commandContext(request, userActor(user)))));
  }

  // The operators' console.

  @Get('operator/organizations')
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('listOrganizations', 'Operator', 'The organizations: search and status filter', { status: 200, data: list(ref('ConsoleOrganization')), meta: ref('PagingMeta') })
  async list(@Query() query: Record<string, unknown>): Promise<SuccessEnvelope<ConsoleOrganizationView[]>> {
    const { page, pageSize } = paging(query ?? {});
    const search = typeof query?.search === 'string' ? query.search.slice(0, 200) : undefined;
    const status = STATUSES.find((candidate) => candidate === query?.status);
    const result = await this.queries.execute(new SearchOrganizations({ search, status }, page, pageSize));
    return ok(result.items, result.meta);
  }

  @Get('operator/approval-queue')
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('getApprovalQueue', 'Operator', 'The organizations waiting for approval or live access', {
    status: 200,
    data: list(ref('ConsoleOrganization')),
    meta: ref('PagingMeta'),
  })
  async queue(@Query() query: Record<string, unknown>): Promise<SuccessEnvelope<ConsoleOrganizationView[]>> {
    const { page, pageSize } = paging(query ?? {});
    const result = await this.queries.execute(new SearchOrganizations({ approvalQueue: true }, page, pageSize));
    return ok(result.items, result.meta);
  }

  @Get('operator/organizations/:id')
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('getOrganizationDetail', 'Operator', 'One organization: wallets, keys, members and the scopes there are', { status: 200, data: ref('OrganizationDetail') })
  async get(
    @Req() request: ConsoleRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<
    SuccessEnvelope<{ organization: ConsoleOrganizationView; wallets: { test: WalletBalance; live: WalletBalance }; keys: ApiKeyView[]; members: unknown[]; scopes: string[] }>
  > {
    const organization = await this.queries.execute(new GetConsoleOrganization(id));
    // The wallets as this instance wrote them (a check or a funding just made here shows at once).
    for (const environment of ['test', 'live'] as const) await this.readYourWrites.beforeRead(request, reply, { organizationId: id, environment }, 'wallet', [WALLETS_PROJECTION]);
    const [test, live, keys, members] = await Promise.all([
      readWalletBalance(this.pool, id, 'test'),
      readWalletBalance(this.pool, id, 'live'),
      this.queries.execute(new ListApiKeys(id)),
      this.accounts.members(id),
    ]);
    return ok({
      organization,
      wallets: { test, live },
      keys,
      members: members.map((member) => ({
        id: member.id,
        email: member.email,
        role: member.role,
        emailVerified: member.emailVerifiedAt !== null,
        createdAt: member.createdAt.toISOString(),
      })),
      // Every scope the service knows (src/scopes/registry.ts), for the page's choice of active scopes.
      scopes: [...SCOPES],
    });
  }

  @Post('operator/organizations/:id/approve')
  @HttpCode(200)
  @ConsoleAccess({ who: 'operator', write: true })
  @ConsoleRoute('approveOrganization', 'Operator', 'Approve an organization', { status: 200, data: ref('ConsoleOrganization') })
  async approve(@Req() request: ConsoleRequest, @Param('id') id: string): Promise<SuccessEnvelope<ConsoleOrganizationView>> {
    await this.commands.execute(new ApproveOrganization(id, this.operatorContext(request)));
    return this.organizationAnswer(id);
  }

  @Post('operator/organizations/:id/suspend')
  @HttpCode(200)
  @ConsoleAccess({ who: 'operator', write: true })
  @ConsoleRoute('suspendOrganization', 'Operator', 'Suspend an organization', { status: 200, data: ref('ConsoleOrganization') }, jsonBody(ref('Suspension')))
  async suspend(@Req() request: ConsoleRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<ConsoleOrganizationView>> {
    const input = validateBody(SuspendOrganizationDto, body);
    await this.commands.execute(new SuspendOrganization(id, input.reason, this.operatorContext(request)));
    return this.organizationAnswer(id);
  }

  @Post('operator/organizations/:id/reinstate')
  @HttpCode(200)
  @ConsoleAccess({ who: 'operator', write: true })
  @ConsoleRoute('reinstateOrganization', 'Operator', 'Reinstate an organization', { status: 200, data: ref('ConsoleOrganization') })
  async reinstate(@Req() request: ConsoleRequest, @Param('id') id: string): Promise<SuccessEnvelope<ConsoleOrganizationView>> {
    await this.commands.execute(new ReinstateOrganization(id, this.operatorContext(request)));
    return this.organizationAnswer(id);
  }

  @Put('operator/organizations/:id/scopes')
  @ConsoleAccess({ who: 'operator', write: true })
  @ConsoleRoute('setOrganizationScopes', 'Operator', "Set an organization's active scopes", { status: 200, data: ref('ConsoleOrganization') }, jsonBody(ref('ScopeSet')))
  async scopes(@Req() request: ConsoleRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<ConsoleOrganizationView>> {
    const input = validateBody(SetScopesDto, body);
    await this.commands.execute(new SetActiveScopes(id, input.scopes, this.operatorContext(request)));
    return this.organizationAnswer(id);
  }

  @Put('operator/organizations/:id/prices')
  @ConsoleAccess({ who: 'operator', write: true })
  @ConsoleRoute('setOrganizationPrices', 'Operator', "Set an organization's prices", { status: 200, data: ref('ConsoleOrganization') }, jsonBody(ref('Prices')))
  async prices(@Req() request: ConsoleRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<ConsoleOrganizationView>> {
    await this.commands.execute(new SetScopePrices(id, pricesBody(body), this.operatorContext(request)));
    return this.organizationAnswer(id);
  }

  @Put('operator/organizations/:id/provider')
  @ConsoleAccess({ who: 'operator', write: true })
  @ConsoleRoute('setOrganizationProvider', 'Operator', "Set an organization's provider", { status: 200, data: ref('ConsoleOrganization') }, jsonBody(ref('ProviderConfiguration')))
  async provider(@Req() request: ConsoleRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<ConsoleOrganizationView>> {
    await this.commands.execute(new ConfigureProvider(id, providerBody(body), this.operatorContext(request)));
    return this.organizationAnswer(id);
  }

  @Put('operator/organizations/:id/name')
  @ConsoleAccess({ who: 'operator', write: true })
  @ConsoleRoute('renameOrganization', 'Operator', 'Rename an organization', { status: 200, data: ref('ConsoleOrganization') }, jsonBody(ref('OrganizationName')))
  async rename(@Req() request: ConsoleRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<ConsoleOrganizationView>> {
    await this.commands.execute(new RenameOrganization(id, validateBody(OrganizationNameDto, body).name, this.operatorContext(request)));
    return this.organizationAnswer(id);
  }

  @Put('operator/organizations/:id/rate-limit')
  @ConsoleAccess({ who: 'operator', write: true })
  @ConsoleRoute('setOrganizationRateLimit', 'Operator', "Set an organization's rate limit", { status: 200, data: ref('ConsoleOrganization') }, jsonBody(ref('RateLimit')))
  async rateLimit(@Req() request: ConsoleRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<ConsoleOrganizationView>> {
    await this.commands.execute(new SetRateLimit(id, rateLimitBody(body).requestsPerMinute, this.operatorContext(request)));
    return this.organizationAnswer(id);
  }

  @Post('operator/organizations/:id/keys')
  @HttpCode(201)
  @ConsoleAccess({ who: 'operator', write: true })
  @ConsoleRoute('issueOrganizationKey', 'Operator', 'Issue an API key for an organization', { status: 201, data: ref('IssuedApiKey') }, jsonBody(ref('NewApiKey')))
  async operatorIssueKey(@Req() request: ConsoleRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<IssuedApiKeyView>> {
    return ok(await this.issue(request, id, body));
  }

  @Delete('operator/keys/:keyId')
  @ConsoleAccess({ who: 'operator', write: true })
  @ConsoleRoute('revokeOrganizationKey', 'Operator', 'Revoke an API key', { status: 200, data: ref('ApiKey') })
  async operatorRevokeKey(@Req() request: ConsoleRequest, @Param('keyId') keyId: string): Promise<SuccessEnvelope<ApiKeyView>> {
    return ok(await this.commands.execute(new RevokeApiKey(keyId, this.operatorContext(request))));
  }

  private async issue(request: ConsoleRequest, organizationId: string, body: unknown): Promise<IssuedApiKeyView> {
    const input = validateBody(IssueApiKeyDto, body);
    const context = commandContext(request, userActor(consoleIdentity(request).user));
    return this.commands.execute(new IssueApiKey(organizationId, { environment: input.environment, name: input.name ?? null, scopes: input.scopes ?? null }, context));
  }

  private operatorContext(request: ConsoleRequest) {
    return commandContext(request, userActor(consoleIdentity(request).user));
  }

  private async organizationAnswer(id: string): Promise<SuccessEnvelope<ConsoleOrganizationView>> {
    return ok(await this.queries.execute(new GetConsoleOrganization(id)));
  }
}
