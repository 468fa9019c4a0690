import { Body, Controller, HttpCode, Inject, Param, Post, Req, UseGuards } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBody, ApiHeader, ApiOperation, ApiParam, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AnyOrganizationStatus, ApiKeyGuard, authenticatedKey, keyActor, type KeyedRequest } from '../auth/api-key.guard.js';
import { ErrorEnvelopeDto } from '../common/api.dto.js';
import { NotFound } from '../common/errors.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { commandContext } from '../common/request-context.js';
import { PersonalDataErasure, type SubjectErasure } from './erasure.js';
import { DataSubjectDto, SubjectErasureEnvelopeDto, SubjectReferencesEnvelopeDto } from './erasure.dto.js';
import { GetVerification } from './verification.commands.js';
import { REFERENCE_PATTERN } from './verification.queries.js';
import { VerificationEnvelopeDto } from './verification.dto.js';
import type { VerificationView } from './verification.views.js';

const unauthenticated = { status: 401, description: 'unauthenticated: missing, unknown or revoked X-Service-Key', type: ErrorEnvelopeDto };
const invalidSubject = {
  status: 422,
  description: 'validation_failed: not exactly one of nin, bvn, phone, account_number, vnin, vin, passport_number, or not valid as for the checks (the value is never echoed)',
  type: ErrorEnvelopeDto,
};

/**
 * Erasure of personal data by its controller, the integrator: by reference and by data subject.
 * Identifiers travel only in bodies (never in a URL, a log or an error). Open whatever the
 * organization's status: a suspended organization still answers its data subjects' requests.
 */
@ApiTags('data protection')
@ApiSecurity('serviceKey')
@ApiHeader({ name: 'X-Service-Key', required: true, description: 'service_test_… or service_live_…: the environment of the verifications concerned' })
@UseGuards(ApiKeyGuard)
@AnyOrganizationStatus()
@Controller('v1')
export class ErasureController {
  constructor(
    @Inject(PersonalDataErasure) private readonly erasure: PersonalDataErasure,
    @Inject(QueryBus) private readonly queries: QueryBus,
  ) {}

  @Post('verifications/:reference/erasure')
  @HttpCode(200)
  @ApiOperation({
    summary: "Erase one verification's personal data (request, result, portrait) by destroying its key",
    description: 'Answers the verification as GET does afterwards: every non-personal field, request and result {}, personalDataErasedAt set. Erasing again answers the same.',
  })
  @ApiParam({ name: 'reference', example: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR' })
  @ApiResponse({ status: 200, type: VerificationEnvelopeDto })
  @ApiResponse(unauthenticated)
  @ApiResponse({ status: 404, description: "not_found: no such reference for the caller's organization and environment", type: ErrorEnvelopeDto })
  @ApiResponse({ status: 409, description: 'verification_pending: the check is still running; erase it once finished', type: ErrorEnvelopeDto })
  async erase(@Req() request: KeyedRequest, @Param('reference') reference: string): Promise<SuccessEnvelope<VerificationView>> {
    const key = authenticatedKey(request);
    if (!REFERENCE_PATTERN.test(reference)) throw new NotFound('No verification with this reference');
    await this.erasure.erase(reference, key, commandContext(request, keyActor(key)));
    return ok(await this.queries.execute(new GetVerification(key, reference)));
  }

  @Post('data-subjects/search')
  @HttpCode(200)
  @ApiOperation({ summary: "The references of the caller's organization and environment whose inputs or results carry an identifier (found by its blind-index token)" })
  @ApiBody({ type: DataSubjectDto, description: 'exactly one identifier' })
  @ApiResponse({ status: 200, type: SubjectReferencesEnvelopeDto })
  @ApiResponse(unauthenticated)
  @ApiResponse(invalidSubject)
  async search(@Req() request: KeyedRequest, @Body() body: unknown): Promise<SuccessEnvelope<{ references: string[] }>> {
    return ok({ references: await this.erasure.search(authenticatedKey(request), body) });
  }

  @Post('data-subjects/erasure')
  @HttpCode(200)
  @ApiOperation({ summary: "Erase the personal data of every verification of the caller's organization and environment that carries an identifier" })
  @ApiBody({ type: DataSubjectDto, description: 'exactly one identifier' })
  @ApiResponse({ status: 200, type: SubjectErasureEnvelopeDto })
  @ApiResponse(unauthenticated)
  @ApiResponse(invalidSubject)
  async eraseSubject(@Req() request: KeyedRequest, @Body() body: unknown): Promise<SuccessEnvelope<SubjectErasure>> {
    const key = authenticatedKey(request);
    return ok(await this.erasure.eraseSubject(key, body, commandContext(request, keyActor(key))));
  }
}
