import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiExcludeEndpoint, ApiHeader, ApiQuery, ApiSecurity } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AnyOrganizationStatus, ApiKeyGuard, authenticatedKey, keyActor, type KeyedRequest } from '../auth/api-key.guard.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { ANY_ROUTE_ERRORS, ApiErrors, ApiPaging, ApiPathParam, ApiRoute, ApiSuccess, KEY_ERRORS, ref } from '../common/openapi.js';
import { commandContext } from '../common/request-context.js';
import { CONSISTENCY_TOKEN_DESCRIPTION, ReadYourWrites } from '../read-models/read-your-writes.js';
import { SCOPES } from '../scopes/scopes.js';
import { GetVerification, ListVerifications, RunVerification } from './verification.commands.js';
import { MAX_PAGE, REFERENCE_PATTERN } from './verification.queries.js';
import type { VerificationSummary, VerificationView } from './verification.views.js';

/** The projection the list reads, which a read waits for to show the key's own checks. */
const LIST_PROJECTIONS = ['verifications'] as const;

/**
 * `POST /v1/{scope}` is documented as one operation per scope (verification.openapi.ts), not here.
 * The reads are open whatever the organization's status (a suspended one still reads its checks).
 */
@ApiSecurity('serviceKey')
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
  @ApiRoute(
    'listVerifications',
    'Verifications',
    'List verifications',
    "The organization's verifications of the key's environment (of its scopes only, for a key restricted to some scopes), most recent first, as summaries. Never charged. Request pages in order until page equals totalPages, with the same filters throughout. Shows the key's own checks answered on this instance (and those of an X-Consistency-Token).",
  )
  @ApiPaging(MAX_PAGE, 999_999_999)
  @ApiQuery({ name: 'scope', required: false, description: 'only checks of this scope', schema: { type: 'string', enum: [...SCOPES] } })
  @ApiQuery({ name: 'status', required: false, description: 'only checks with this status', schema: { type: 'string', enum: ['found', 'not_found', 'failed'] } })
  @ApiHeader({ name: 'X-Consistency-Token', required: false, description: CONSISTENCY_TOKEN_DESCRIPTION })
  @ApiSuccess(200, 'A page of summaries, most recent first', { type: 'array', items: ref('VerificationSummary') }, ref('PagingMeta'))
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS)
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
  @ApiRoute(
    'getVerification',
    'Verifications',
    'Get a verification',
    'The verification as the run answered it (with a fresh portrait link). Never charged; never runs a check. To a key restricted to some scopes, a check of another scope is not_found.',
  )
  @ApiPathParam('reference', { type: 'string', pattern: REFERENCE_PATTERN.source, example: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR' }, 'the reference the run answered')
  @ApiSuccess(200, 'The verification', ref('Verification'))
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS, 'not_found')
  async get(@Req() request: KeyedRequest, @Param('reference') reference: string): Promise<SuccessEnvelope<VerificationView>> {
    return ok(await this.queries.execute(new GetVerification(authenticatedKey(request), reference)));
  }

  /** No scope in the path: always 422. */
  @Post()
  @HttpCode(201)
  @ApiExcludeEndpoint()
  async noScope(@Req() request: KeyedRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<VerificationView>> {
    return this.run(request, reply, undefined, body);
  }

  @Post(':scope')
  @HttpCode(201)
  @ApiExcludeEndpoint()
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
