import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, UseGuards } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiExcludeEndpoint, ApiQuery, ApiSecurity } from '@nestjs/swagger';
import { ApiKeyGuard, authenticatedKey, keyActor, type KeyedRequest } from '../auth/api-key.guard.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { ANY_ROUTE_ERRORS, ApiErrors, ApiPaging, ApiPathParam, ApiRoute, ApiSuccess, KEY_ERRORS, ORGANIZATION_STATE_ERRORS, ref } from '../common/openapi.js';
import { commandContext } from '../common/request-context.js';
import { SCOPES } from '../scopes/scopes.js';
import { GetVerification, ListVerifications, RunVerification } from './verification.commands.js';
import { MAX_PAGE, REFERENCE_PATTERN } from './verification.queries.js';
import type { VerificationSummary, VerificationView } from './verification.views.js';

function linkBase(request: KeyedRequest): string {
  return `${request.protocol}://${request.host}`;
}

/** `POST /v1/{scope}` is documented as one operation per scope (verification.openapi.ts), not here. */
@ApiSecurity('serviceKey')
@UseGuards(ApiKeyGuard)
@Controller('v1')
export class VerificationsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Get('verifications')
  @ApiRoute(
    'listVerifications',
    'Verifications',
    'List verifications',
    "The organization's verifications of the key's environment, most recent first, as summaries. Never charged. Request pages in order until page equals totalPages, with the same filters throughout.",
  )
  @ApiPaging(MAX_PAGE, 999_999_999)
  @ApiQuery({ name: 'scope', required: false, description: 'only checks of this scope', schema: { type: 'string', enum: [...SCOPES] } })
  @ApiQuery({ name: 'status', required: false, description: 'only checks with this status', schema: { type: 'string', enum: ['found', 'not_found', 'failed'] } })
  @ApiSuccess(200, 'A page of summaries, most recent first', { type: 'array', items: ref('VerificationSummary') }, ref('PagingMeta'))
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS, ORGANIZATION_STATE_ERRORS)
  async list(@Req() request: KeyedRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<VerificationSummary[]>> {
    const page = await this.queries.execute(new ListVerifications(authenticatedKey(request), query ?? {}));
    return ok(page.data, page.meta);
  }

  @Get('verifications/:reference')
  @ApiRoute('getVerification', 'Verifications', 'Get a verification', 'The verification as the run answered it (with a fresh portrait link). Never charged; never runs a check.')
  @ApiPathParam('reference', { type: 'string', pattern: REFERENCE_PATTERN.source, example: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR' }, 'the reference the run answered')
  @ApiSuccess(200, 'The verification', ref('Verification'))
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS, ORGANIZATION_STATE_ERRORS, 'not_found')
  async get(@Req() request: KeyedRequest, @Param('reference') reference: string): Promise<SuccessEnvelope<VerificationView>> {
    return ok(await this.queries.execute(new GetVerification(authenticatedKey(request), reference, linkBase(request))));
  }

  /** No scope in the path: always 422. */
  @Post()
  @HttpCode(201)
  @ApiExcludeEndpoint()
  async noScope(@Req() request: KeyedRequest, @Body() body: unknown): Promise<SuccessEnvelope<VerificationView>> {
    return this.run(request, undefined, body);
  }

  @Post(':scope')
  @HttpCode(201)
  @ApiExcludeEndpoint()
  async runScope(@Req() request: KeyedRequest, @Param('scope') scope: string, @Body() body: unknown): Promise<SuccessEnvelope<VerificationView>> {
    return this.run(request, scope, body);
  }

  private async run(request: KeyedRequest, scope: string | undefined, body: unknown): Promise<SuccessEnvelope<VerificationView>> {
    const key = authenticatedKey(request);
    const view = await this.commands.execute(new RunVerification(key, scope, body, commandContext(request, keyActor(key)), linkBase(request)));
    return ok(view);
  }
}
