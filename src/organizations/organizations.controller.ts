import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Query, Req, UseGuards } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { AdminGuard, operatorActor, type AdminRequest } from '../common/admin.guard.js';
import { ValidationFailed } from '../common/errors.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { paging } from '../common/paging.js';
import { commandContext } from '../common/request-context.js';
import { validateBody } from '../common/validation.js';
import {
  ApproveOrganization,
  ConfigureProvider,
  IssueApiKey,
  RegisterOrganization,
  ReinstateOrganization,
  RevokeApiKey,
  SetActiveScopes,
  SetRateLimit,
  SetRetention,
  DestroyPersonalData,
  SetScopePrices,
  SuspendOrganization,
} from './organization.commands.js';
import { IssueApiKeyDto, pricesBody, providerBody, rateLimitBody, retentionBody, RegisterOrganizationDto, SetScopesDto, SuspendOrganizationDto } from './organization.dto.js';
import { GetOrganization, ListApiKeys, ListOrganizations } from './organization.queries.js';
import type { ApiKeyView, IssuedApiKeyView, OrganizationView } from './organization.views.js';

/** The operators' "dashboard": organizations, scopes, prices and keys, as events on `organization-{id}`. */
@Controller('admin/v1')
@UseGuards(AdminGuard)
export class OrganizationsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post('organizations')
  @HttpCode(201)
  async register(@Req() request: AdminRequest, @Body() body: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    const input = validateBody(RegisterOrganizationDto, body);
    return ok(await this.commands.execute(new RegisterOrganization({ name: input.name, email: input.email }, this.context(request))));
  }

  @Get('organizations')
  async list(@Query() query: Record<string, unknown>): Promise<SuccessEnvelope<OrganizationView[]>> {
    const { page, pageSize } = paging(query);
    const result = await this.queries.execute(new ListOrganizations(page, pageSize));
    return ok(result.items, result.meta);
  }

  @Get('organizations/:id')
  async get(@Param('id') id: string): Promise<SuccessEnvelope<OrganizationView>> {
    return ok(await this.queries.execute(new GetOrganization(id)));
  }

  @Post('organizations/:id/approve')
  @HttpCode(200)
  async approve(@Req() request: AdminRequest, @Param('id') id: string): Promise<SuccessEnvelope<OrganizationView>> {
    return ok(await this.commands.execute(new ApproveOrganization(id, this.context(request))));
  }

  @Post('organizations/:id/suspend')
  @HttpCode(200)
  async suspend(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    const input = validateBody(SuspendOrganizationDto, body);
    return ok(await this.commands.execute(new SuspendOrganization(id, input.reason, this.context(request))));
  }

  @Post('organizations/:id/reinstate')
  @HttpCode(200)
  async reinstate(@Req() request: AdminRequest, @Param('id') id: string): Promise<SuccessEnvelope<OrganizationView>> {
    return ok(await this.commands.execute(new ReinstateOrganization(id, this.context(request))));
  }

  @Put('organizations/:id/scopes')
  async scopes(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    const input = validateBody(SetScopesDto, body);
    return ok(await this.commands.execute(new SetActiveScopes(id, input.scopes, this.context(request))));
  }

  @Put('organizations/:id/prices')
  async prices(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    return ok(await this.commands.execute(new SetScopePrices(id, pricesBody(body), this.context(request))));
  }

  /** The upstream of one environment; credentials are stored encrypted and never shown again. */
  @Put('organizations/:id/provider')
  async provider(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    return ok(await this.commands.execute(new ConfigureProvider(id, providerBody(body), this.context(request))));
  }

  /** Requests per API key per minute on /v1 for this organization's keys; null returns to RATE_LIMIT_PER_MINUTE. */
  @Put('organizations/:id/rate-limit')
  async rateLimit(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    return ok(await this.commands.execute(new SetRateLimit(id, rateLimitBody(body).requestsPerMinute, this.context(request))));
  }

  /** Days the personal data of its checks is kept before the retention sweep erases it; null returns to PERSONAL_DATA_RETENTION_DAYS. */
  @Put('organizations/:id/retention')
  async retention(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    return ok(await this.commands.execute(new SetRetention(id, retentionBody(body).retentionDays, this.context(request))));
  }

  /** Offboarding: destroys the organization's keys, so every verification of it reads as erased. `confirm` must repeat the id. */
  @Delete('organizations/:id/personal-data')
  async destroyPersonalData(@Req() request: AdminRequest, @Param('id') id: string, @Query('confirm') confirm: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    if (confirm !== id) throw new ValidationFailed([{ field: 'confirm', message: 'must repeat the organization id: this destroys its personal data for good' }]);
    return ok(await this.commands.execute(new DestroyPersonalData(id, this.context(request))));
  }

  @Post('organizations/:id/keys')
  @HttpCode(201)
  async issueKey(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<IssuedApiKeyView>> {
    const input = validateBody(IssueApiKeyDto, body);
    return ok(await this.commands.execute(new IssueApiKey(id, { environment: input.environment, name: input.name ?? null, scopes: input.scopes ?? null }, this.context(request))));
  }

  @Get('organizations/:id/keys')
  async keys(@Param('id') id: string): Promise<SuccessEnvelope<ApiKeyView[]>> {
    return ok(await this.queries.execute(new ListApiKeys(id)));
  }

  /** Answers once the api-keys projection has applied the revocation (normally milliseconds), or after 2 s. */
  @Delete('keys/:keyId')
  async revokeKey(@Req() request: AdminRequest, @Param('keyId') keyId: string): Promise<SuccessEnvelope<ApiKeyView>> {
    return ok(await this.commands.execute(new RevokeApiKey(keyId, this.context(request))));
  }

  private context(request: AdminRequest) {
    return commandContext(request, operatorActor(request));
  }
}
