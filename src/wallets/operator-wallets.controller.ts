import { Body, Controller, Get, Inject, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse } from '@nestjs/swagger';
import { IsInt, IsString, Matches, Max, Min } from 'class-validator';
import type { FastifyReply } from 'fastify';
import type pg from 'pg';
import { AdminGuard, operatorActor, type AdminRequest } from '../common/admin.guard.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { isEnvironment, type Environment } from '../common/environment.js';
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
  ENVIRONMENT,
  okEnvelope,
  ORGANIZATION_ID,
  ref,
} from '../common/openapi.js';
import { commandContext } from '../common/request-context.js';
import { validateBody } from '../common/validation.js';
import { PG_POOL } from '../database/pool.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { PROJECTION_WAIT_MS, ProjectionWaiter } from '../read-models/projection-waiter.js';
import { FUNDING_REFERENCE, FUNDING_REFERENCE_MESSAGE } from './funding-reference.js';
import { assertOrganizationExists } from './organization-exists.js';
import { MAX_FUNDING_KOBO } from './wallet.decider.js';
import { type WalletBalance, WalletLedger } from './wallet-ledger.port.js';
import { readWalletBalance, WALLET_PROJECTIONS } from './wallet.read-model.js';

export class FundWalletDto {
  @IsInt({ message: 'amountKobo must be an integer number of kobo' })
  @Min(1, { message: 'amountKobo must be at least 1' })
  @Max(MAX_FUNDING_KOBO, { message: `amountKobo must be at most ${MAX_FUNDING_KOBO}` })
  amountKobo!: number;

  @IsString()
  @Matches(FUNDING_REFERENCE, { message: FUNDING_REFERENCE_MESSAGE })
  reference!: string;
}

export interface WalletView extends WalletBalance {
  readonly organizationId: string;
  readonly environment: Environment;
}

function environmentErrors(environment: string): FieldError[] {
  return isEnvironment(environment) ? [] : [{ field: 'environment', message: 'environment must be "test" or "live"' }];
}

/** Operators fund wallets and read their balances: one wallet per organization and environment. */
@ApiBearerAuth('adminToken')
@Controller('admin/v1/organizations/:id/wallets/:environment')
@UseGuards(AdminGuard)
export class WalletsController {
  constructor(
    @Inject(WalletLedger) private readonly ledger: WalletLedger,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(ProjectionWaiter) private readonly waiter: ProjectionWaiter,
  ) {}

  /** 201 when this reference credits the wallet, 200 with the unchanged wallet when it already credited this amount, 409 when it credited another. */
  @Post('fundings')
  @ApiRoute(
    'fundWallet',
    'Admin: wallets',
    'Fund a wallet',
    'Credits the wallet once per funding reference: 201 when it credits, 200 with the wallet unchanged when the reference already credited this amount, 409 `funding_reference_conflict` when it credited another.',
  )
  @ApiPathParam('id', ORGANIZATION_ID, 'the organization')
  @ApiPathParam('environment', ENVIRONMENT, 'test (sandbox money) or live (real money)')
  @ApiJsonBody(ref('Funding'), { transfer: { summary: 'a bank transfer of ₦5,000', value: { amountKobo: 500_000, reference: 'bank-transfer-2026-03-03-0001' } } })
  @ApiSuccess(201, 'Credited', ref('OrganizationWallet'))
  @ApiResponse({
    status: 200,
    description: 'This reference already credited this amount: nothing more is credited',
    content: { 'application/json': { schema: okEnvelope(ref('OrganizationWallet')) } },
  })
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, ADMIN_WRITE_ERRORS, 'funding_reference_conflict')
  async fund(
    @Req() request: AdminRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') organizationId: string,
    @Param('environment') environment: string,
    @Body() body: unknown,
  ): Promise<SuccessEnvelope<WalletView>> {
    const input = this.validate(environment, body);
    await assertOrganizationExists(this.store, organizationId);
    const wallet = { organizationId, environment: environment as Environment };
    const result = await this.ledger.fund(wallet, { fundingReference: input.reference, amountKobo: input.amountKobo }, commandContext(request, operatorActor(request)));
    if (result.position !== undefined && result.position > 0n) await this.waiter.waitFor(WALLET_PROJECTIONS, result.position, PROJECTION_WAIT_MS);
    void reply.status(result.funded ? 201 : 200);
    return ok({ ...wallet, ...result.balance });
  }

  @Get()
  @ApiRoute(
    'getOrganizationWallet',
    'Admin: wallets',
    "Get an organization's wallet",
    'The balance, reserved and available amounts of one wallet, in kobo. Admin and auditor tokens.',
  )
  @ApiPathParam('id', ORGANIZATION_ID, 'the organization')
  @ApiPathParam('environment', ENVIRONMENT, 'test (sandbox money) or live (real money)')
  @ApiSuccess(200, 'The wallet', ref('OrganizationWallet'))
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async get(@Param('id') organizationId: string, @Param('environment') environment: string): Promise<SuccessEnvelope<WalletView>> {
    const errors = environmentErrors(environment);
    if (errors.length > 0) throw new ValidationFailed(errors);
    await assertOrganizationExists(this.store, organizationId);
    const env = environment as Environment;
    return ok({ organizationId, environment: env, ...(await readWalletBalance(this.pool, organizationId, env)) });
  }

  /** Every field error at once: the path's environment and the body's fields. */
  private validate(environment: string, body: unknown): FundWalletDto {
    const errors = environmentErrors(environment);
    let input: FundWalletDto | undefined;
    try {
      input = validateBody(FundWalletDto, body);
    } catch (error) {
      if (!(error instanceof ValidationFailed)) throw error;
      errors.push(...error.fields);
    }
    if (errors.length > 0 || input === undefined) throw new ValidationFailed(errors);
    return input;
  }
}
