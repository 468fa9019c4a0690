import { Body, Controller, Get, Inject, Param, Put, Req, UseGuards } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import { AdminGuard, operatorActor, type AdminRequest } from '../common/admin.guard.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { ValidationFailed, type FieldError } from '../common/errors.js';
import {
  ADMIN_ERRORS,
  ADMIN_WRITE_ERRORS,
  ANY_ROUTE_ERRORS,
  ApiErrors,
  ApiJsonBody,
  ApiPathParam,
  ApiRoute,
  ApiSuccess,
  BODY_ERRORS,
  ORGANIZATION_ID,
  ref,
} from '../common/openapi.js';
import { commandContext } from '../common/request-context.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { MAX_FUNDING_KOBO } from '../wallets/wallet.decider.js';
import { assertOrganizationExists } from '../wallets/organization-exists.js';
import type { OwnLimits } from './topup-allowance.decider.js';
import { TopUps, type TopUpLimits } from './topups.service.js';

export type TopUpLimitsView = TopUpLimits & { readonly organizationId: string };

/** `{maxTopUpKobo, dailyLimitKobo}`, both present, each null or an integer from the smallest top-up to the largest funding; every field error at once. */
export function ownLimitsOf(body: unknown, minTopUpKobo: number): OwnLimits {
  const input = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const errors: FieldError[] = [];
  for (const field of Object.keys(input)) if (field !== 'maxTopUpKobo' && field !== 'dailyLimitKobo') errors.push({ field, message: `${field} is not a field of the limits` });
  for (const field of ['maxTopUpKobo', 'dailyLimitKobo'] as const) {
    const value = input[field];
    if (value !== null && (!Number.isSafeInteger(value) || (value as number) < minTopUpKobo || (value as number) > MAX_FUNDING_KOBO)) {
      errors.push({ field, message: `${field} must be null (the deployment's setting) or an integer number of kobo from ${minTopUpKobo} to ${MAX_FUNDING_KOBO}` });
    }
  }
  if (errors.length > 0) throw new ValidationFailed(errors);
  return { maxTopUpKobo: input.maxTopUpKobo as number | null, dailyLimitKobo: input.dailyLimitKobo as number | null };
}

/** Operators set an organization's own top-up limits; the deployment's settings stay the default. */
@ApiBearerAuth('adminToken')
@Controller('admin/v1/organizations/:id/topup_limits')
@UseGuards(AdminGuard)
export class TopUpLimitsController {
  constructor(
    @Inject(TopUps) private readonly topUps: TopUps,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @ApiRoute(
    'getTopUpLimits',
    'Admin: wallets',
    "Get an organization's top-up limits",
    'The limits in force for top-ups of both its wallets, and what an operator set. Admin and auditor tokens.',
  )
  @ApiPathParam('id', ORGANIZATION_ID, 'the organization')
  @ApiSuccess(200, 'The limits', ref('TopUpLimits'))
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async get(@Param('id') organizationId: string): Promise<SuccessEnvelope<TopUpLimitsView>> {
    await assertOrganizationExists(this.store, organizationId);
    return ok({ organizationId, ...(await this.topUps.limits(organizationId)) });
  }

  @Put()
  @ApiRoute(
    'setTopUpLimits',
    'Admin: wallets',
    "Set an organization's top-up limits",
    "Per top-up and per Lagos day, for both its wallets, recorded as an event; null goes back to the deployment's setting.",
  )
  @ApiPathParam('id', ORGANIZATION_ID, 'the organization')
  @ApiJsonBody(ref('OwnTopUpLimits'), { own: { summary: '₦1,000,000 a top-up, ₦5,000,000 a day', value: { maxTopUpKobo: 100_000_000, dailyLimitKobo: 500_000_000 } } })
  @ApiSuccess(200, 'The limits now in force', ref('TopUpLimits'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, ADMIN_WRITE_ERRORS)
  async set(@Req() request: AdminRequest, @Param('id') organizationId: string, @Body() body: unknown): Promise<SuccessEnvelope<TopUpLimitsView>> {
    const own = ownLimitsOf(body, this.config.payments.minTopUpKobo);
    await assertOrganizationExists(this.store, organizationId);
    return ok({ organizationId, ...(await this.topUps.setLimits(organizationId, own, commandContext(request, operatorActor(request)))) });
  }
}
