import { Controller, Get, HttpCode, Inject, Param, Post, Query, Req, UseGuards } from '@nestjs/common';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { isEnvironment, type Environment } from '../common/environment.js';
import { ValidationFailed } from '../common/errors.js';
import { paging } from '../common/paging.js';
import { commandContext } from '../common/request-context.js';
import { ConsoleAccess, consoleIdentity, ConsoleGuard, organizationOf, userActor, type ConsoleRequest } from '../console-auth/console.guard.js';
import { DataSubjectRights, type HoldView, type OperatorRequestView, type RequestView } from '../verifications/data-subject-rights.js';
import { ConsoleRoute, list } from '../common/console-route.js';
import { ref } from '../common/openapi.js';

const OWNERS = ['owner'] as const;

function environmentOf(query: Record<string, unknown> | undefined): Environment {
  const value = query?.environment ?? 'test';
  if (!isEnvironment(value)) throw new ValidationFailed([{ field: 'environment', message: 'environment must be "test" or "live"' }]);
  return value;
}

const meta = (total: number, page: number, pageSize: number) => ({ total, page, pageSize, totalPages: Math.ceil(total / pageSize) });

/**
 * The console's data-subject requests page: the record of exports and erasures and the holds of
 * the owner's organization (`?environment=`, test by default), lifting a hold; and the operators'
 * record of every organization. Exports and new holds name an identifier: they stay on the API,
 * where it travels in a body the integrator's own system sends.
 */
@Controller('console/api')
@UseGuards(ConsoleGuard)
export class ConsoleDataSubjectsController {
  constructor(@Inject(DataSubjectRights) private readonly rights: DataSubjectRights) {}

  @Get('data-subjects/requests')
  @ConsoleAccess({ who: 'integrator', roles: OWNERS })
  @ConsoleRoute('listDataSubjectRequests', 'Data subjects', "The organization's data subjects' requests", {
    status: 200,
    data: list(ref('DataSubjectRequest')),
    meta: ref('PagingMeta'),
  })
  async requests(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<RequestView[]>> {
    const { environment: _environment, ...rest } = query ?? {};
    const { page, pageSize } = paging(rest);
    const { data, total } = await this.rights.listRequests({ organizationId: organizationOf(consoleIdentity(request).user), environment: environmentOf(query) }, page, pageSize);
    return ok(
      data.map(({ organizationId: _organization, ...entry }) => entry),
      meta(total, page, pageSize),
    );
  }

  @Get('data-subjects/holds')
  @ConsoleAccess({ who: 'integrator', roles: OWNERS })
  @ConsoleRoute('listHolds', 'Data subjects', "The organization's holds", { status: 200, data: list(ref('Hold')), meta: ref('PagingMeta') })
  async holds(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<HoldView[]>> {
    const { environment: _environment, ...rest } = query ?? {};
    const { page, pageSize } = paging(rest);
    const { data, total } = await this.rights.listHolds({ organizationId: organizationOf(consoleIdentity(request).user), environment: environmentOf(query) }, page, pageSize);
    return ok(data, meta(total, page, pageSize));
  }

  @Post('data-subjects/holds/:holdId/lift')
  @HttpCode(200)
  @ConsoleAccess({ who: 'integrator', roles: OWNERS })
  @ConsoleRoute('liftHold', 'Data subjects', 'Lift a hold', { status: 200, data: ref('Hold') })
  async lift(@Req() request: ConsoleRequest, @Param('holdId') holdId: string, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<HoldView>> {
    const user = consoleIdentity(request).user;
    return ok(await this.rights.liftHold({ organizationId: organizationOf(user), environment: environmentOf(query) }, holdId, commandContext(request, userActor(user))));
  }

  @Get('operator/data-subject-requests')
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('listAllDataSubjectRequests', 'Operator', "Every organization's data subjects' requests", {
    status: 200,
    data: list(ref('OperatorDataSubjectRequest')),
    meta: ref('PagingMeta'),
  })
  async all(@Query() query: Record<string, unknown>): Promise<SuccessEnvelope<OperatorRequestView[]>> {
    const { page, pageSize } = paging(query ?? {});
    const { data, total } = await this.rights.listRequests({}, page, pageSize);
    return ok(data, meta(total, page, pageSize));
  }
}
