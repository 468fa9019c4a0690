import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Query, Req, UseGuards } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiQuery } from '@nestjs/swagger';
import { AdminGuard, operatorActor, type AdminRequest } from '../common/admin.guard.js';
import { ValidationFailed } from '../common/errors.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import {
  ADMIN_ERRORS,
  ANY_ROUTE_ERRORS,
  ApiErrors,
  ApiJsonBody,
  ApiPaging,
  ApiPathParam,
  ApiRoute,
  ApiSuccess,
  BODY_ERRORS,
  ORGANIZATION_CHANGE_ERRORS,
  ORGANIZATION_ID,
  ref,
} from '../common/openapi.js';
import { serves } from '../providers/capabilities.js';
import { SCOPES } from '../scopes/scopes.js';
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
  RenameOrganization,
  SetRateLimit,
  SetRetention,
  DestroyPersonalData,
  SetScopePrices,
  SuspendOrganization,
} from './organization.commands.js';
import {
  IssueApiKeyDto,
  OrganizationNameDto,
  pricesBody,
  providerBody,
  rateLimitBody,
  retentionBody,
  RegisterOrganizationDto,
  SetScopesDto,
  SuspendOrganizationDto,
} from './organization.dto.js';
import { GetOrganization, ListApiKeys, ListOrganizations } from './organization.queries.js';
import type { ApiKeyView, IssuedApiKeyView, OrganizationView } from './organization.views.js';
import { KEY_ID_SCHEMA } from './organization.openapi.js';

const ID = ApiPathParam('id', ORGANIZATION_ID, 'the organization');
const ORGANIZATION = ref('Organization');
/** A change of an organization: the body's own errors, the admin's, and those of a change that may not be in force in time. */
const CHANGE_ERRORS = ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, ORGANIZATION_CHANGE_ERRORS);

/** The scopes the provider example's pair cannot both serve: an organization with one of them active is refused that pair. */
const NOT_SERVED_BY_BOTH = SCOPES.filter((scope) => !serves('dojah', scope) || !serves('prembly', scope));

/** The operators' "dashboard": organizations, scopes, prices and keys, as events on `organization-{id}`. */
@ApiBearerAuth('adminToken')
@Controller('admin/v1')
@UseGuards(AdminGuard)
export class OrganizationsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post('organizations')
  @HttpCode(201)
  @ApiRoute(
    'createOrganization',
    'Admin: organizations',
    'Register an organization',
    'A new organization, pending, with DEFAULT_ACTIVE_SCOPES active and SANDBOX_CREDIT_KOBO on its test wallet.',
  )
  @ApiJsonBody(ref('NewOrganization'), { acme: { summary: 'an integrator', value: { name: 'Acme Lending Ltd', email: 'compliance@acme.example' } } })
  @ApiSuccess(201, 'Registered', ORGANIZATION)
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, ADMIN_ERRORS, 'read_only', 'conflict')
  async register(@Req() request: AdminRequest, @Body() body: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    const input = validateBody(RegisterOrganizationDto, body);
    return ok(await this.commands.execute(new RegisterOrganization({ name: input.name, email: input.email }, this.context(request))));
  }

  @Get('organizations')
  @ApiRoute('listOrganizations', 'Admin: organizations', 'List organizations', 'Oldest first. Admin and auditor tokens.')
  @ApiPaging()
  @ApiSuccess(200, 'A page of organizations', { type: 'array', items: ORGANIZATION }, ref('PagingMeta'))
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async list(@Query() query: Record<string, unknown>): Promise<SuccessEnvelope<OrganizationView[]>> {
    const { page, pageSize } = paging(query);
    const result = await this.queries.execute(new ListOrganizations(page, pageSize));
    return ok(result.items, result.meta);
  }

  @Get('organizations/:id')
  @ApiRoute('getOrganization', 'Admin: organizations', 'Get an organization', 'Admin and auditor tokens.')
  @ID
  @ApiSuccess(200, 'The organization', ORGANIZATION)
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async get(@Param('id') id: string): Promise<SuccessEnvelope<OrganizationView>> {
    return ok(await this.queries.execute(new GetOrganization(id)));
  }

  @Post('organizations/:id/approve')
  @HttpCode(200)
  @ApiRoute(
    'approveOrganization',
    'Admin: organizations',
    'Approve an organization',
    'Its live keys may then run checks. Approving an approved organization changes nothing. No body.',
  )
  @ID
  @ApiSuccess(200, 'The organization, approved', ORGANIZATION)
  @CHANGE_ERRORS
  async approve(@Req() request: AdminRequest, @Param('id') id: string): Promise<SuccessEnvelope<OrganizationView>> {
    return ok(await this.commands.execute(new ApproveOrganization(id, this.context(request))));
  }

  @Post('organizations/:id/suspend')
  @HttpCode(200)
  @ApiRoute('suspendOrganization', 'Admin: organizations', 'Suspend an organization', 'Every key of it is refused (403 organization_suspended) until it is reinstated.')
  @ID
  @ApiJsonBody(ref('Suspension'), { unpaid: { summary: 'a reason', value: { reason: 'Unpaid invoices' } } })
  @ApiSuccess(200, 'The organization, suspended', ORGANIZATION)
  @CHANGE_ERRORS
  async suspend(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    const input = validateBody(SuspendOrganizationDto, body);
    return ok(await this.commands.execute(new SuspendOrganization(id, input.reason, this.context(request))));
  }

  @Post('organizations/:id/reinstate')
  @HttpCode(200)
  @ApiRoute('reinstateOrganization', 'Admin: organizations', 'Reinstate a suspended organization', 'No body.')
  @ID
  @ApiSuccess(200, 'The organization, reinstated', ORGANIZATION)
  @CHANGE_ERRORS
  async reinstate(@Req() request: AdminRequest, @Param('id') id: string): Promise<SuccessEnvelope<OrganizationView>> {
    return ok(await this.commands.execute(new ReinstateOrganization(id, this.context(request))));
  }

  @Put('organizations/:id/scopes')
  @ApiRoute(
    'setOrganizationScopes',
    'Admin: organizations',
    "Set an organization's active scopes",
    'The full set of active scopes. A scope its configured upstream cannot serve is refused (422).',
  )
  @ID
  @ApiJsonBody(ref('ScopeSet'), { identity: { summary: 'NIN and BVN checks', value: { scopes: ['nin', 'bvn'] } } })
  @ApiSuccess(200, 'The organization', ORGANIZATION)
  @CHANGE_ERRORS
  async scopes(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    const input = validateBody(SetScopesDto, body);
    return ok(await this.commands.execute(new SetActiveScopes(id, input.scopes, this.context(request))));
  }

  @Put('organizations/:id/prices')
  @ApiRoute(
    'setOrganizationPrices',
    'Admin: organizations',
    "Set an organization's prices",
    'The full set of per-scope price overrides in kobo (0 to 100,000,000); scopes left out return to the default price.',
  )
  @ID
  @ApiJsonBody(ref('Prices'), { discount: { summary: 'cheaper NIN and BVN checks', value: { nin: 5000, bvn: 7500 } } })
  @ApiSuccess(200, 'The organization', ORGANIZATION)
  @CHANGE_ERRORS
  async prices(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    return ok(await this.commands.execute(new SetScopePrices(id, pricesBody(body), this.context(request))));
  }

  /** The upstream of one environment; credentials are stored encrypted and never shown again. */
  @Put('organizations/:id/provider')
  @ApiRoute(
    'setOrganizationProvider',
    'Admin: organizations',
    "Configure an organization's upstream provider",
    'The upstream of one environment and an optional fallback. The credentials are stored encrypted and never shown again. An upstream that cannot serve an active scope is refused (422).',
  )
  @ID
  @ApiJsonBody(ref('ProviderConfiguration'), {
    sandbox: { summary: 'the sandbox for live checks', value: { environment: 'live', provider: 'sandbox' } },
    dojah: {
      summary: `Dojah, with Prembly as fallback: for an organization whose active scopes both serve (not ${NOT_SERVED_BY_BOTH.join(' or ')}; else 422 on scopes)`,
      value: {
        environment: 'live',
        provider: 'dojah',
        credentials: { appId: 'app-id', secretKey: 'secret-key' },
        fallback: { provider: 'prembly', credentials: { appId: 'app-id', apiKey: 'api-key' } },
      },
    },
  })
  @ApiSuccess(200, 'The organization', ORGANIZATION)
  @CHANGE_ERRORS
  async provider(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    return ok(await this.commands.execute(new ConfigureProvider(id, providerBody(body), this.context(request))));
  }

  @Put('organizations/:id/name')
  @ApiRoute('setOrganizationName', 'Admin: organizations', 'Rename an organization', 'Its id, keys, wallets and checks stay as they are. The same name again changes nothing.')
  @ID
  @ApiJsonBody(ref('OrganizationName'), { rename: { summary: 'a new name', value: { name: 'Acme Lending Holdings Ltd' } } })
  @ApiSuccess(200, 'The organization', ORGANIZATION)
  @CHANGE_ERRORS
  async rename(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    return ok(await this.commands.execute(new RenameOrganization(id, validateBody(OrganizationNameDto, body).name, this.context(request))));
  }

  /** Requests per API key per minute on /v1 for this organization's keys; null returns to RATE_LIMIT_PER_MINUTE. */
  @Put('organizations/:id/rate-limit')
  @ApiRoute(
    'setOrganizationRateLimit',
    'Admin: organizations',
    "Set an organization's rate limit",
    "Requests per API key per minute on /v1 for this organization's keys; null returns to RATE_LIMIT_PER_MINUTE.",
  )
  @ID
  @ApiJsonBody(ref('RateLimit'), {
    limit: { summary: '120 a minute', value: { requestsPerMinute: 120 } },
    default: { summary: 'back to the default', value: { requestsPerMinute: null } },
  })
  @ApiSuccess(200, 'The organization', ORGANIZATION)
  @CHANGE_ERRORS
  async rateLimit(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    return ok(await this.commands.execute(new SetRateLimit(id, rateLimitBody(body).requestsPerMinute, this.context(request))));
  }

  /** Days the personal data of its checks is kept before the retention sweep erases it; null returns to PERSONAL_DATA_RETENTION_DAYS. */
  @Put('organizations/:id/retention')
  @ApiRoute(
    'setOrganizationRetention',
    'Admin: organizations',
    "Set an organization's retention",
    'Days the personal data of its checks is kept before the retention sweep erases it (1 to 7,300); null returns to PERSONAL_DATA_RETENTION_DAYS.',
  )
  @ID
  @ApiJsonBody(ref('Retention'), { year: { summary: 'a year', value: { retentionDays: 365 } }, default: { summary: 'back to the default', value: { retentionDays: null } } })
  @ApiSuccess(200, 'The organization', ORGANIZATION)
  @CHANGE_ERRORS
  async retention(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    return ok(await this.commands.execute(new SetRetention(id, retentionBody(body).retentionDays, this.context(request))));
  }

  /** Offboarding: destroys the organization's keys, so every verification of it reads as erased. `confirm` must repeat the id. */
  @Delete('organizations/:id/personal-data')
  @ApiRoute(
    'destroyOrganizationPersonalData',
    'Admin: organizations',
    "Destroy an organization's personal data (offboarding)",
    'Destroys its keys, so every verification of it reads as erased; it can run no more checks. Its wallet, history and audit stay whole. Not undoable: `confirm` must repeat the id.',
  )
  @ID
  @ApiQuery({ name: 'confirm', required: true, description: 'the organization id again', schema: ORGANIZATION_ID as never })
  @ApiSuccess(200, 'The organization, with personalDataDestroyedAt set', ORGANIZATION)
  @ApiErrors(ANY_ROUTE_ERRORS, ORGANIZATION_CHANGE_ERRORS)
  async destroyPersonalData(@Req() request: AdminRequest, @Param('id') id: string, @Query('confirm') confirm: unknown): Promise<SuccessEnvelope<OrganizationView>> {
    if (confirm !== id) throw new ValidationFailed([{ field: 'confirm', message: 'must repeat the organization id: this destroys its personal data for good' }]);
    return ok(await this.commands.execute(new DestroyPersonalData(id, this.context(request))));
  }

  @Post('organizations/:id/keys')
  @HttpCode(201)
  @ApiRoute(
    'issueApiKey',
    'Admin: API keys',
    'Issue an API key',
    'The answer holds the full key, shown this once; the service keeps only its hash. At most 200 keys per organization.',
  )
  @ID
  @ApiJsonBody(ref('NewApiKey'), {
    test: { summary: 'a test key for every active scope', value: { environment: 'test' } },
    restricted: { summary: 'a live key for NIN checks only', value: { environment: 'live', name: 'onboarding service', scopes: ['nin'] } },
  })
  @ApiSuccess(201, 'Issued', ref('IssuedApiKey'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, ORGANIZATION_CHANGE_ERRORS)
  async issueKey(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<IssuedApiKeyView>> {
    const input = validateBody(IssueApiKeyDto, body);
    return ok(await this.commands.execute(new IssueApiKey(id, { environment: input.environment, name: input.name ?? null, scopes: input.scopes ?? null }, this.context(request))));
  }

  @Get('organizations/:id/keys')
  @ApiRoute('listApiKeys', 'Admin: API keys', "List an organization's API keys", 'Never the keys themselves. Admin and auditor tokens.')
  @ID
  @ApiSuccess(200, 'Its keys, revoked ones included', { type: 'array', items: ref('ApiKey') })
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async keys(@Param('id') id: string): Promise<SuccessEnvelope<ApiKeyView[]>> {
    return ok(await this.queries.execute(new ListApiKeys(id)));
  }

  /** Answers once the api-keys projection has applied the revocation (normally milliseconds), or 503 after OPERATOR_CHANGE_WAIT_MS. */
  @Delete('keys/:keyId')
  @ApiRoute('revokeApiKey', 'Admin: API keys', 'Revoke an API key', 'The key is refused (401) from then on. Revoking a revoked key changes nothing.')
  @ApiPathParam('keyId', KEY_ID_SCHEMA, 'the key')
  @ApiSuccess(200, 'The key, revoked', ref('ApiKey'))
  @ApiErrors(ANY_ROUTE_ERRORS, ORGANIZATION_CHANGE_ERRORS)
  async revokeKey(@Req() request: AdminRequest, @Param('keyId') keyId: string): Promise<SuccessEnvelope<ApiKeyView>> {
    return ok(await this.commands.execute(new RevokeApiKey(keyId, this.context(request))));
  }

  private context(request: AdminRequest) {
    return commandContext(request, operatorActor(request));
  }
}
