import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type pg from 'pg';
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
import { PG_POOL } from '../database/pool.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { assertOrganizationExists } from '../wallets/organization-exists.js';
import { sendReceipt, topUpReceipt } from './receipt.pdf.js';
import { readTopUps, type TopUpView } from './topup.read-model.js';
import { resolutionOf, resolvedView, TopUpResolutions, type PaymentAttention, type ResolvedTopUp } from './topup-resolution.js';

const REFERENCE = { type: 'string', minLength: 1, maxLength: 100, example: 'top_01JD3Q9ZK8W6V2C4X7N5B0M1TR' } as const;

/**
 * Operators' top-ups over the admin API: any organization's top-ups and receipts, and the payments
 * reconciliation across organizations (what needs a person, and its resolution). The auditor token
 * reads all of it and resolves nothing.
 */
@ApiBearerAuth('adminToken')
@Controller('admin/v1')
@UseGuards(AdminGuard)
export class OperatorTopUpsController {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(TopUpResolutions) private readonly resolutions: TopUpResolutions,
  ) {}

  @Get('organizations/:id/wallets/:environment/topups')
  @ApiRoute('listOrganizationTopUps', 'Admin: wallets', "List a wallet's top-ups", 'Newest first. Admin and auditor tokens.')
  @ApiPathParam('id', ORGANIZATION_ID, 'the organization')
  @ApiPathParam('environment', ENVIRONMENT, 'test (sandbox money) or live (real money)')
  @ApiPaging()
  @ApiSuccess(200, 'A page of top-ups', { type: 'array', items: ref('TopUpRecord') }, ref('PagingMeta'))
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async list(@Param('id') organizationId: string, @Param('environment') environment: string, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<TopUpView[]>> {
    if (!isEnvironment(environment)) throw new ValidationFailed([{ field: 'environment', message: 'environment must be "test" or "live"' }]);
    await assertOrganizationExists(this.store, organizationId);
    const { page, pageSize } = paging(query ?? {});
    const { total, topUps } = await readTopUps(this.pool, organizationId, environment, page, pageSize);
    return ok(topUps, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }

  @Get('organizations/:id/topups/:reference/receipt.pdf')
  @ApiRoute(
    'getOrganizationTopUpReceipt',
    'Admin: wallets',
    "Download a top-up's receipt",
    "A credited top-up's receipt as PDF, the one its organization downloads. Admin and auditor tokens.",
  )
  @ApiPathParam('id', ORGANIZATION_ID, 'the organization')
  @ApiPathParam('reference', REFERENCE, "the top-up's reference (ours, or the rail's for a bank transfer)")
  @ApiResponse({ status: 200, description: 'The receipt', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } })
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async receipt(@Param('id') organizationId: string, @Param('reference') reference: string, @Res() reply: FastifyReply): Promise<void> {
    await assertOrganizationExists(this.store, organizationId);
    sendReceipt(reply, reference, await topUpReceipt(this.pool, organizationId, reference));
  }

  @Get('payments/attention')
  @ApiRoute(
    'listPaymentsNeedingAttention',
    'Admin: wallets',
    'List the top-ups that need an operator',
    "Across organizations: every flagged top-up, and each recent failed or unfinished one the provider says it settled (uncredited), with the provider's figures asked now beside ours. Admin and auditor tokens.",
  )
  @ApiSuccess(200, 'Oldest first', { type: 'array', items: ref('PaymentAttention') })
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async attention(): Promise<SuccessEnvelope<PaymentAttention[]>> {
    return ok(await this.resolutions.attention());
  }

  @Post('payments/topups/:reference/resolution')
  @HttpCode(200)
  @ApiRoute(
    'resolveTopUp',
    'Admin: wallets',
    'Resolve a top-up that needs an operator',
    "`credit`: the provider's settled amount, verified now, credited once under the top-up's reference; `dismiss`: nothing credited, for a reason of the list. Recorded as a `TopUpResolved` event. Admin token only.",
  )
  @ApiPathParam('reference', REFERENCE, "the top-up's reference")
  // One example: the document's tests run every example against one top-up, and a top-up is resolved once.
  @ApiJsonBody(ref('TopUpResolutionInput'), { dismiss: { summary: 'dismiss: the payer was refunded', value: { action: 'dismiss', reason: 'refunded_to_payer' } } })
  @ApiSuccess(200, 'Resolved', ref('ResolvedTopUp'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, ADMIN_WRITE_ERRORS, 'top_up_not_resolvable')
  async resolve(@Req() request: AdminRequest, @Param('reference') reference: string, @Body() body: unknown): Promise<SuccessEnvelope<ResolvedTopUp>> {
    const state = await this.resolutions.resolve(reference, resolutionOf(body), commandContext(request, operatorActor(request)));
    return ok(resolvedView(state));
  }
}
