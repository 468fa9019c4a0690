import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiQuery } from '@nestjs/swagger';
import { AdminGuard, operatorActor, type AdminRequest } from '../common/admin.guard.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { isEnvironment } from '../common/environment.js';
import { ValidationFailed } from '../common/errors.js';
import {
  ADMIN_ERRORS,
  ADMIN_WRITE_ERRORS,
  ANY_ROUTE_ERRORS,
  ApiErrors,
  ApiJsonBody,
  ApiPaging,
  ApiPathParam,
  ApiRoute,
  ApiSuccess,
  BODY_ERRORS,
  ENVIRONMENT,
  ORGANIZATION_ID,
  ref,
} from '../common/openapi.js';
import { paging } from '../common/paging.js';
import { commandContext } from '../common/request-context.js';
import { isPlainObject } from '../common/validation.js';
import { DataSubjectRights, HOLD_ID, type HoldView, type OperatorRequestView } from './data-subject-rights.js';

const ORGANIZATION_PATTERN = new RegExp(ORGANIZATION_ID.pattern as string);

/** The operators' view of data subjects' rights: every organization's record of exports and erasures, and holds on any organization's checks. */
@ApiBearerAuth('adminToken')
@Controller('admin/v1')
@UseGuards(AdminGuard)
export class AdminDataSubjectsController {
  constructor(@Inject(DataSubjectRights) private readonly rights: DataSubjectRights) {}

  @Get('data-subject-requests')
  @ApiRoute(
    'adminListDataSubjectRequests',
    'Admin: organizations',
    'List exports and erasures of all organizations',
    'The record of data-subject exports and erasures, most recent first; `organizationId` and `environment` narrow it.',
  )
  @ApiPaging()
  @ApiQuery({ name: 'organizationId', required: false, schema: ORGANIZATION_ID as never })
  @ApiQuery({ name: 'environment', required: false, schema: ENVIRONMENT as never })
  @ApiSuccess(200, 'A page of the record', { type: 'array', items: ref('OperatorDataSubjectRequest') }, ref('PagingMeta'))
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async requests(@Query() query: Record<string, unknown>): Promise<SuccessEnvelope<OperatorRequestView[]>> {
    const { page, pageSize } = paging(query ?? {});
    const { organizationId, environment } = query ?? {};
    if (organizationId !== undefined && (typeof organizationId !== 'string' || !ORGANIZATION_PATTERN.test(organizationId)))
      throw new ValidationFailed([{ field: 'organizationId', message: 'must be an organization id (org_…)' }]);
    if (environment !== undefined && !isEnvironment(environment)) throw new ValidationFailed([{ field: 'environment', message: 'must be test or live' }]);
    const { data, total } = await this.rights.listRequests({ organizationId: organizationId, environment: environment }, page, pageSize);
    return ok(data, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }

  @Get('holds')
  @ApiRoute('adminListHolds', 'Admin: organizations', 'List holds of all organizations', 'Lifted ones included, most recent first.')
  @ApiPaging()
  @ApiSuccess(200, 'A page of holds', { type: 'array', items: ref('OperatorHold') }, ref('PagingMeta'))
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async holds(@Query() query: Record<string, unknown>): Promise<SuccessEnvelope<HoldView[]>> {
    const { page, pageSize } = paging(query ?? {});
    const { data, total } = await this.rights.listAllHolds(page, pageSize);
    return ok(data, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }

  @Post('organizations/:organizationId/holds')
  @HttpCode(201)
  @ApiRoute('adminPlaceHold', 'Admin: organizations', "Place a hold on an organization's check or data subject", 'As on /v1, with the environment in the body.')
  @ApiPathParam('organizationId', ORGANIZATION_ID, 'the organization')
  @ApiJsonBody(ref('AdminHoldInput'), {
    subject: { summary: 'a data subject of the live environment', value: { environment: 'live', subject: { nin: '21440414976' }, reason: 'regulator_request' } },
  })
  @ApiSuccess(201, 'The hold, in force', ref('Hold'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, ADMIN_WRITE_ERRORS, 'conflict', 'change_not_in_force')
  async place(@Req() request: AdminRequest, @Param('organizationId') organizationId: string, @Body() body: unknown): Promise<SuccessEnvelope<HoldView>> {
    if (!isPlainObject(body)) throw new ValidationFailed([{ field: 'body', message: 'the body must be a JSON object' }]);
    const { environment, ...hold } = body;
    if (!isEnvironment(environment)) throw new ValidationFailed([{ field: 'environment', message: 'must be test or live' }]);
    return ok(await this.rights.placeHoldFor(organizationId, environment, hold, commandContext(request, operatorActor(request))));
  }

  @Post('holds/:holdId/lift')
  @HttpCode(200)
  @ApiRoute('adminLiftHold', 'Admin: organizations', 'Lift a hold', "Any organization's hold. Lifting again answers the same. No body.")
  @ApiPathParam('holdId', { type: 'string', pattern: HOLD_ID.source }, 'the hold')
  @ApiSuccess(200, 'The hold, lifted', ref('Hold'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, ADMIN_WRITE_ERRORS, 'conflict', 'change_not_in_force')
  async lift(@Req() request: AdminRequest, @Param('holdId') holdId: string): Promise<SuccessEnvelope<HoldView>> {
    return ok(await this.rights.liftHold(null, holdId, commandContext(request, operatorActor(request))));
  }
}
