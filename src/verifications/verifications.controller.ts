import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBody, ApiExtraModels, ApiHeader, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AnyOrganizationStatus, ApiKeyGuard, authenticatedKey, keyActor, type KeyedRequest } from '../auth/api-key.guard.js';
import { ErrorEnvelopeDto } from '../common/api.dto.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { commandContext } from '../common/request-context.js';
import { CONSISTENCY_TOKEN_DESCRIPTION, ReadYourWrites } from '../read-models/read-your-writes.js';
import { SCOPES } from '../scopes/scopes.js';
import { GetVerification, ListVerifications, RunVerification } from './verification.commands.js';
import { VerificationEnvelopeDto, VerificationInputsDto, VerificationListEnvelopeDto } from './verification.dto.js';
import type { VerificationSummary, VerificationView } from './verification.views.js';

/** The read model of the list, which waits for it to show the key's own checks. */
const LIST_PROJECTIONS = ['verifications'] as const;

const errors = {
  401: { status: 401, description: 'unauthenticated: missing, unknown or revoked X-Service-Key', type: ErrorEnvelopeDto },
  403: {
    status: 403,
    description: 'scope_not_active, scope_not_allowed, organization_not_approved (live keys), organization_suspended (a suspended organization may still read its verifications and wallet), provider_not_configured',
    type: ErrorEnvelopeDto,
  },
};

@ApiTags('verifications')
@ApiSecurity('serviceKey')
@ApiHeader({ name: 'X-Service-Key', required: true, description: 'service_test_… or service_live_…' })
@ApiExtraModels(ErrorEnvelopeDto)
@ApiResponse({
  status: 429,
  description: 'rate_limited: more requests this minute than the key may make (RATE_LIMIT_PER_MINUTE or the organization\'s limit); Retry-After gives the seconds to wait; details {limitPerMinute, retryAfterSeconds}',
  type: ErrorEnvelopeDto,
})
@UseGuards(ApiKeyGuard)
@Controller('v1')
export class VerificationsController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
    @Inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
  ) {}

  @Get('verifications')
  @AnyOrganizationStatus()
  @ApiOperation({ summary: "List the organization's verifications of the key's environment, most recent first. Never charged." })
  @ApiQuery({ name: 'page', required: false, description: 'from 1; default 1' })
  @ApiQuery({ name: 'pageSize', required: false, description: '1 to 100, default 20; above 100 is capped to 100' })
  @ApiQuery({ name: 'scope', required: false, enum: SCOPES })
  @ApiQuery({ name: 'status', required: false, enum: ['found', 'not_found', 'failed'] })
  @ApiHeader({ name: 'X-Consistency-Token', required: false, description: CONSISTENCY_TOKEN_DESCRIPTION })
  @ApiResponse({ status: 200, type: VerificationListEnvelopeDto })
  @ApiResponse(errors[401])
  @ApiResponse({ status: 422, description: 'validation_failed: page, pageSize, scope or status invalid, or X-Consistency-Token malformed', type: ErrorEnvelopeDto })
  @ApiResponse({ status: 503, description: 'service_unavailable: the read model did not show the key\'s latest checks (or the token\'s) within 2 s, or a store is unavailable', type: ErrorEnvelopeDto })
  async list(
    @Req() request: KeyedRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Query() query: Record<string, unknown>,
  ): Promise<SuccessEnvelope<VerificationSummary[]>> {
    const key = authenticatedKey(request);
    await this.readYourWrites.beforeRead(request, reply, key, 'verification', LIST_PROJECTIONS);
    const page = await this.queries.execute(new ListVerifications(key, query ?? {}));
    return ok(page.data, page.meta);
  }

  @Get('verifications/:reference')
  @AnyOrganizationStatus()
  @ApiOperation({ summary: 'Get one verification, identical in fields to the run response. Never charged; never runs a check.' })
  @ApiParam({ name: 'reference', example: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR' })
  @ApiResponse({ status: 200, type: VerificationEnvelopeDto })
  @ApiResponse(errors[401])
  @ApiResponse({ status: 404, description: "not_found: no such reference for the caller's organization and environment", type: ErrorEnvelopeDto })
  async get(@Req() request: KeyedRequest, @Param('reference') reference: string): Promise<SuccessEnvelope<VerificationView>> {
    return ok(await this.queries.execute(new GetVerification(authenticatedKey(request), reference)));
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'No scope in the path: always 422' })
  @ApiResponse({ status: 422, description: 'validation_failed: a scope is required', type: ErrorEnvelopeDto })
  async noScope(@Req() request: KeyedRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<VerificationView>> {
    return this.run(request, reply, undefined, body);
  }

  @Post(':scope')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Run one new check of a scope (every call is a new, billed check with a new reference)',
    description:
      'Inputs per scope: nin {nin}, pnv {phone}, vnin {vnin}, bvn {bvn}, pvc {vin}, passport {passport_number}, bank_account {bank, account_number}, premium_bank_account {account_number, bank?}, phone {phone}, face_match {image, nin | bvn}. Unknown fields are refused. Test keys run on the sandbox: the last digit of the main input decides (1 not_found, 2 provider failure, 3 provider timeout, 4 face_match no match, else found).',
  })
  @ApiParam({ name: 'scope', enum: SCOPES })
  @ApiBody({ type: VerificationInputsDto })
  @ApiResponse({ status: 201, type: VerificationEnvelopeDto })
  @ApiResponse(errors[401])
  @ApiResponse({ status: 402, description: 'insufficient_balance: details {reference, priceKobo, balanceKobo}; the verification is recorded as failed, not charged', type: ErrorEnvelopeDto })
  @ApiResponse(errors[403])
  @ApiResponse({ status: 422, description: 'validation_failed: details.fields lists every field error; also an unknown scope', type: ErrorEnvelopeDto })
  @ApiResponse({
    status: 502,
    description: 'provider_failed: the provider failed or timed out; details {reference, failureReason: provider_error | provider_timeout | provider_unavailable (| internal_error)}; not charged',
    type: ErrorEnvelopeDto,
  })
  @ApiResponse({
    status: 503,
    description:
      'service_unavailable: the event store or database is unavailable; when a check was made, details {reference}: not charged, or its outcome not known yet (GET it once settled)',
    type: ErrorEnvelopeDto,
  })
  async runScope(
    @Req() request: KeyedRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('scope') scope: string,
    @Body() body: unknown,
  ): Promise<SuccessEnvelope<VerificationView>> {
    return this.run(request, reply, scope, body);
  }

  /** Whatever the outcome (201, 402, 502, ...), the answer carries the token of the key's writes known here. */
  private async run(request: KeyedRequest, reply: FastifyReply, scope: string | undefined, body: unknown): Promise<SuccessEnvelope<VerificationView>> {
    const key = authenticatedKey(request);
    try {
      return ok(await this.commands.execute(new RunVerification(key, scope, body, commandContext(request, keyActor(key)))));
    } finally {
      this.readYourWrites.answerToken(reply, key);
    }
  }
}
