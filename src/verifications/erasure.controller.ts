import { Body, Controller, HttpCode, Inject, Param, Post, Req, UseGuards } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';
import { AnyOrganizationStatus, ApiKeyGuard, authenticatedKey, keyActor, type KeyedRequest } from '../auth/api-key.guard.js';
import { NotFound } from '../common/errors.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { ANY_ROUTE_ERRORS, ApiErrors, ApiJsonBody, ApiPathParam, ApiRoute, ApiSuccess, BODY_ERRORS, KEY_ERRORS, ref } from '../common/openapi.js';
import { commandContext } from '../common/request-context.js';
import { DataSubjectRights } from './data-subject-rights.js';
import { PersonalDataErasure, type SubjectErasure } from './erasure.js';
import { REFERENCE_PATTERN } from './verification.queries.js';
import type { VerificationView } from './verification.views.js';

const SUBJECT_EXAMPLES = {
  nin: { summary: 'by NIN', value: { nin: '21440414976' } },
  phone: { summary: 'by phone number, in any of its forms', value: { phone: '+2348150292236' } },
};

/**
 * Erasure of personal data by its controller, the integrator: by reference and by data subject.
 * Identifiers travel only in bodies (never in a URL, a log or an error). Open whatever the
 * organization's status: a suspended organization still answers its data subjects' requests.
 */
@ApiSecurity('serviceKey')
@UseGuards(ApiKeyGuard)
@AnyOrganizationStatus()
@Controller('v1')
export class ErasureController {
  constructor(
    @Inject(PersonalDataErasure) private readonly erasure: PersonalDataErasure,
    @Inject(DataSubjectRights) private readonly rights: DataSubjectRights,
  ) {}

  @Post('verifications/:reference/erasure')
  @HttpCode(200)
  @ApiRoute(
    'eraseVerification',
    'Data protection',
    "Erase a verification's personal data",
    "Destroys the verification's data key and deletes its portrait. Answers the verification as GET does from then on: every non-personal field, request and result {}, personalDataErasedAt set. Erasing again answers the same. No body. To a key restricted to some scopes, a check of another scope is not_found. A hold in force answers 409 legal_hold. Recorded in the record of erasures.",
  )
  @ApiPathParam('reference', { type: 'string', pattern: REFERENCE_PATTERN.source, example: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR' }, 'the verification to erase')
  @ApiSuccess(200, 'The verification, erased', ref('Verification'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, 'not_found', 'verification_pending', 'legal_hold', 'change_not_in_force')
  async erase(@Req() request: KeyedRequest, @Param('reference') reference: string): Promise<SuccessEnvelope<VerificationView>> {
    const key = authenticatedKey(request);
    if (!REFERENCE_PATTERN.test(reference)) throw new NotFound('No verification with this reference');
    return ok(await this.rights.erase(reference, key, commandContext(request, keyActor(key))));
  }

  @Post('data-subjects/search')
  @HttpCode(200)
  @ApiRoute(
    'searchDataSubject',
    'Data protection',
    "Find a data subject's verifications",
    "The references of the caller's organization and environment (of its scopes only, for a key restricted to some scopes) whose inputs or results carry an identifier (found by its blind-index token; the value is never echoed), at most 500.",
  )
  @ApiJsonBody(ref('DataSubject'), SUBJECT_EXAMPLES, 'exactly one identifier')
  @ApiSuccess(200, 'The references found', ref('SubjectReferences'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS)
  async search(@Req() request: KeyedRequest, @Body() body: unknown): Promise<SuccessEnvelope<{ references: string[] }>> {
    return ok({ references: await this.erasure.search(authenticatedKey(request), body) });
  }

  @Post('data-subjects/erasure')
  @HttpCode(200)
  @ApiRoute(
    'eraseDataSubject',
    'Data protection',
    "Erase a data subject's personal data",
    "Erases every verification of the caller's organization and environment (of its scopes only, for a key restricted to some scopes) that carries the identifier, at most 500 a call: call again until references is empty. Checks still running are listed in pending, not erased. A hold in force on the subject or any of its checks answers 409 legal_hold and erases none. Recorded in the record of erasures.",
  )
  @ApiJsonBody(ref('DataSubject'), SUBJECT_EXAMPLES, 'exactly one identifier')
  @ApiSuccess(200, 'The verifications erased, and those still running', ref('SubjectErasure'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, 'legal_hold', 'change_not_in_force')
  async eraseSubject(@Req() request: KeyedRequest, @Body() body: unknown): Promise<SuccessEnvelope<SubjectErasure>> {
    const key = authenticatedKey(request);
    return ok(await this.rights.eraseSubject(key, body, commandContext(request, keyActor(key))));
  }
}
