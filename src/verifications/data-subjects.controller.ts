import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { ApiHeader, ApiResponse, ApiSecurity } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AnyOrganizationStatus, ApiKeyGuard, authenticatedKey, keyActor, type KeyedRequest } from '../auth/api-key.guard.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { okEnvelope, ANY_ROUTE_ERRORS, ApiErrors, ApiJsonBody, ApiPaging, ApiPathParam, ApiRoute, ApiSuccess, BODY_ERRORS, KEY_ERRORS, ref } from '../common/openapi.js';
import { paging } from '../common/paging.js';
import { commandContext } from '../common/request-context.js';
import { DataSubjectRights, exportZip, HOLD_ID, type HoldView, type RequestView, type SubjectExport } from './data-subject-rights.js';

const SUBJECT_EXAMPLES = {
  nin: { summary: 'by NIN', value: { nin: '21440414976' } },
  phone: { summary: 'by phone number, in any of its forms', value: { phone: '+2348150292236' } },
};
const HOLD_PATH = ApiPathParam('holdId', { type: 'string', pattern: HOLD_ID.source, example: 'hld_01JD3Q9ZK8W6V2C4X7N5B0M1TR' }, 'the hold');

/** Whether the caller asked for the ZIP (`Accept: application/zip`); anything else answers JSON. */
function wantsZip(request: KeyedRequest): boolean {
  const accept = request.headers.accept;
  return typeof accept === 'string' && /(^|,)\s*application\/zip\s*(;|,|$)/i.test(accept);
}

/**
 * Data subjects' rights (data-subject-rights.ts): the export, holds, and the record of exports and
 * erasures. Identifiers travel only in bodies. Open whatever the organization's status.
 */
@ApiSecurity('serviceKey')
@UseGuards(ApiKeyGuard)
@AnyOrganizationStatus()
@Controller('v1/data-subjects')
export class DataSubjectsController {
  constructor(@Inject(DataSubjectRights) private readonly rights: DataSubjectRights) {}

  @Post('export')
  @HttpCode(200)
  @ApiRoute(
    'exportDataSubject',
    'Data protection',
    "Export a data subject's personal data",
    "Everything the service holds on the subject in the caller's organization and environment (of its scopes only, for a key restricted to some scopes), for a data subject's access request: every verification carrying the identifier as GET answers it (request, result, portrait link), the holds, and earlier exports and erasures of the subject; at most 500 verifications. With `Accept: application/zip`, a ZIP of export.json and the portraits (portraits/{reference}.jpg or .png). Recorded as an export. Answered with Cache-Control: no-store.",
  )
  @ApiHeader({
    name: 'Accept',
    required: false,
    description: '`application/zip` for the ZIP; anything else answers JSON',
    schema: { type: 'string', enum: ['application/json', 'application/zip'] },
  })
  @ApiJsonBody(ref('DataSubject'), SUBJECT_EXAMPLES, 'exactly one identifier')
  @ApiResponse({
    status: 200,
    description: 'The export: JSON, or the ZIP',
    headers: { 'Cache-Control': { description: 'no-store', schema: { type: 'string', enum: ['no-store'] } } },
    content: {
      'application/json': { schema: okEnvelope(ref('SubjectExport')) },
      'application/zip': { schema: { type: 'string', format: 'binary', description: 'export.json (a SubjectExport, with portraitFiles) and portraits/' } },
    },
  })
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, 'change_not_in_force')
  async export(@Req() request: KeyedRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<SubjectExport> | Buffer> {
    const key = authenticatedKey(request);
    const zip = wantsZip(request);
    const { document, portraits } = await this.rights.export(key, body, zip ? 'zip' : 'json', commandContext(request, keyActor(key)));
    reply.header('cache-control', 'no-store');
    if (!zip) return ok(document);
    reply.header('content-type', 'application/zip');
    reply.header('content-disposition', `attachment; filename="${document.exportId}.zip"`);
    return exportZip(document, portraits);
  }

  @Post('holds')
  @HttpCode(201)
  @ApiRoute(
    'placeHold',
    'Data protection',
    'Place a hold',
    "Stops the erasure (by reference, by subject, by retention) of one verification, or of every verification of the caller's organization and environment carrying a data subject's identifier (those run later included), until lifted or until `until`. Erasures it stops answer 409 legal_hold with its reason. To a key restricted to some scopes, a check of another scope is not_found.",
  )
  @ApiJsonBody(ref('HoldInput'), {
    subject: { summary: 'a data subject, until lifted', value: { subject: { nin: '21440414986' }, reason: 'aml_record_keeping' } },
    until: { summary: 'a data subject, until a date', value: { subject: { phone: '08131346061' }, reason: 'litigation', until: '2030-01-01T00:00:00Z' } },
  })
  @ApiSuccess(201, 'The hold, in force', ref('Hold'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, 'not_found', 'conflict', 'change_not_in_force')
  async place(@Req() request: KeyedRequest, @Body() body: unknown): Promise<SuccessEnvelope<HoldView>> {
    const key = authenticatedKey(request);
    return ok(await this.rights.placeHold(key, body, commandContext(request, keyActor(key))));
  }

  @Get('holds')
  @ApiRoute(
    'listHolds',
    'Data protection',
    'List holds',
    "The holds of the caller's organization and environment, lifted ones included, most recent first. To a key restricted to some scopes, a hold on a check of another scope shows reference null.",
  )
  @ApiPaging()
  @ApiSuccess(200, 'A page of holds', { type: 'array', items: ref('Hold') }, ref('PagingMeta'))
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS)
  async holds(@Req() request: KeyedRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<HoldView[]>> {
    const key = authenticatedKey(request);
    const { page, pageSize } = paging(query ?? {});
    const { data, total } = await this.rights.listHolds(key, page, pageSize);
    return ok(data, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }

  @Get('holds/:holdId')
  @ApiRoute('getHold', 'Data protection', 'Get a hold')
  @HOLD_PATH
  @ApiSuccess(200, 'The hold', ref('Hold'))
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS, 'not_found')
  async hold(@Req() request: KeyedRequest, @Param('holdId') holdId: string): Promise<SuccessEnvelope<HoldView>> {
    return ok(await this.rights.hold(authenticatedKey(request), holdId));
  }

  @Post('holds/:holdId/lift')
  @HttpCode(200)
  @ApiRoute(
    'liftHold',
    'Data protection',
    'Lift a hold',
    'Erasure and retention apply again to what it held (unless another hold is in force). Lifting again answers the same. No body.',
  )
  @HOLD_PATH
  @ApiSuccess(200, 'The hold, lifted', ref('Hold'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, 'not_found', 'conflict', 'change_not_in_force')
  async lift(@Req() request: KeyedRequest, @Param('holdId') holdId: string): Promise<SuccessEnvelope<HoldView>> {
    const key = authenticatedKey(request);
    return ok(await this.rights.liftHold(key, holdId, commandContext(request, keyActor(key))));
  }

  @Get('requests')
  @ApiRoute(
    'listDataSubjectRequests',
    'Data protection',
    'List exports and erasures',
    "The record of the caller's organization and environment: each export and each erasure asked for through the API (by reference or by subject), who asked and when, by reference and masked identifier, most recent first (to a key restricted to some scopes, only references of checks of its scopes). Retention's erasures are on the verifications themselves.",
  )
  @ApiPaging()
  @ApiSuccess(200, 'A page of the record', { type: 'array', items: ref('DataSubjectRequest') }, ref('PagingMeta'))
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS)
  async requests(@Req() request: KeyedRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<RequestView[]>> {
    const key = authenticatedKey(request);
    const { page, pageSize } = paging(query ?? {});
    const { data, total } = await this.rights.listRequests({ organizationId: key.organizationId, environment: key.environment }, page, pageSize, key);
    return ok(
      data.map(({ organizationId: _organization, ...entry }) => entry),
      { total, page, pageSize, totalPages: Math.ceil(total / pageSize) },
    );
  }
}
