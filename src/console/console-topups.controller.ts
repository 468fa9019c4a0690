import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type pg from 'pg';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { isEnvironment, type Environment } from '../common/environment.js';
import { NotFound, ValidationFailed } from '../common/errors.js';
import { assertOrganizationExists } from '../wallets/organization-exists.js';
import { paging } from '../common/paging.js';
import { commandContext } from '../common/request-context.js';
import { ConsoleAccess, consoleIdentity, ConsoleGuard, organizationOf, userActor, type ConsoleRequest } from '../console-auth/console.guard.js';
import { PG_POOL } from '../database/pool.js';
import { walletStatement, statementPdf, STATEMENT_MONTH, type WalletStatement } from '../audit/wallet-statement.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { reconcileWalletPayments, type WalletPaymentsReconciliation } from '../payments/payment-reconciliation.js';
import { sendReceipt, topUpReceipt } from '../payments/receipt.pdf.js';
import { readTopUps, type DedicatedAccountView, type TopUpView } from '../payments/topup.read-model.js';
import { TopUps, type WebhookOutcome } from '../payments/topups.service.js';
import { MAX_FUNDING_KOBO } from '../wallets/wallet.decider.js';
import { resolutionOf, resolvedView, TopUpResolutions, type PaymentAttention, type ResolvedTopUp } from '../payments/topup-resolution.js';
import { ConsoleRoute, jsonBody, list } from '../common/console-route.js';
import { ref } from '../common/openapi.js';

/** Who tops the wallet up: those who pay. Developers do not. */
const FINANCE = ['owner', 'finance'] as const;

/**
 * The wallet page's top-ups for the user's organization and the page's `?environment=`: start one
 * (the answer names the checkout to send the payer to), follow one, list them.
 */
@Controller('console/api/wallet/topups')
@UseGuards(ConsoleGuard)
export class ConsoleTopUpsController {
  constructor(
    @Inject(TopUps) private readonly topUps: TopUps,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  /** The auditor's page: the wallet's recent top-ups reconciled from the log against the provider, with flags and totals (what `npm run audit:payments` checks, for one wallet). */
  @Get('reconciliation')
  @ConsoleAccess({ who: 'integrator', roles: FINANCE })
  @ConsoleRoute('getPaymentsReconciliation', 'Wallet', "The wallet's recent top-ups reconciled from the log against the provider", {
    status: 200,
    data: ref('PaymentsReconciliation'),
  })
  async reconciliation(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<WalletPaymentsReconciliation>> {
    return ok(await reconcileWalletPayments(this.store, (rail) => this.topUps.rail(rail), this.owner(request, query)));
  }

  @Post()
  @HttpCode(201)
  @ConsoleAccess({ who: 'integrator', roles: FINANCE })
  @ConsoleRoute('startTopUp', 'Wallet', 'Start a top-up: the checkout link', { status: 201, data: ref('TopUpStarted') }, jsonBody(ref('TopUpInput')))
  async create(
    @Req() request: ConsoleRequest,
    @Query() query: Record<string, unknown>,
    @Body() body: unknown,
  ): Promise<SuccessEnvelope<{ reference: string; authorizationUrl: string }>> {
    const owner = this.owner(request, query);
    const amountKobo = (body as { amountKobo?: unknown } | null)?.amountKobo;
    if (typeof amountKobo !== 'number' || !Number.isSafeInteger(amountKobo)) throw new ValidationFailed([{ field: 'amountKobo', message: 'must be an integer number of kobo' }]);
    const { user } = consoleIdentity(request);
    return ok(await this.topUps.initiate(owner, { amountKobo, channel: 'card', email: user.email }, commandContext(request, userActor(user))));
  }

  @Get()
  @ConsoleAccess({ who: 'integrator', roles: FINANCE })
  @ConsoleRoute('listTopUps', 'Wallet', "The wallet's top-ups", { status: 200, data: list(ref('TopUp')), meta: ref('PagingMeta') })
  async list(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<TopUpView[]>> {
    const owner = this.owner(request, query);
    const { environment: _environment, ...rest } = query ?? {};
    const { page, pageSize } = paging(rest);
    const { total, topUps } = await readTopUps(this.pool, owner.organizationId, owner.environment, page, pageSize);
    return ok(topUps, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }

  /** The limits in force for the organization's top-ups (its own where an operator set them) and what is left of today's. */
  @Get('limits')
  @ConsoleAccess({ who: 'integrator', roles: FINANCE })
  @ConsoleRoute('getTopUpLimits', 'Wallet', "The organization's top-up limits and what is left of today's", { status: 200, data: ref('TopUpLimits') })
  async limits(
    @Req() request: ConsoleRequest,
    @Query() query: Record<string, unknown>,
  ): Promise<SuccessEnvelope<{ minTopUpKobo: number; maxTopUpKobo: number; dailyLimitKobo: number; leftTodayKobo: number }>> {
    const owner = this.owner(request, query);
    const [limits, counted] = await Promise.all([this.topUps.limits(owner.organizationId), this.topUps.countedToday(owner)]);
    return ok({
      minTopUpKobo: limits.minTopUpKobo,
      maxTopUpKobo: limits.maxTopUpKobo,
      dailyLimitKobo: limits.dailyLimitKobo,
      leftTodayKobo: Math.max(0, limits.dailyLimitKobo - counted),
    });
  }

  /** The receipt of a credited top-up, as PDF: ours (`top_…`) or a bank transfer's, under the rail's reference. */
  @Get(':reference/receipt.pdf')
  @ConsoleAccess({ who: 'integrator', roles: FINANCE })
  @ConsoleRoute('getTopUpReceipt', 'Wallet', "A credited top-up's receipt", { status: 200, file: 'application/pdf' })
  async receipt(@Req() request: ConsoleRequest, @Param('reference') reference: string, @Res() reply: FastifyReply): Promise<void> {
    sendReceipt(reply, reference, await topUpReceipt(this.pool, organizationOf(consoleIdentity(request).user), reference));
  }

  /** One top-up's state from its own stream (the authority), so the page sees it move at once. */
  @Get(':reference')
  @ConsoleAccess({ who: 'integrator', roles: FINANCE })
  @ConsoleRoute('getTopUp', 'Wallet', "One top-up's state", { status: 200, data: ref('TopUpState') })
  async get(
    @Req() request: ConsoleRequest,
    @Param('reference') reference: string,
  ): Promise<SuccessEnvelope<{ reference: string; environment: string; status: string; amountKobo: number; paidKobo: number; feesKobo: number }>> {
    const state = await this.topUps.state(reference);
    if (state.organizationId !== organizationOf(consoleIdentity(request).user)) throw new NotFound('No top-up with this reference');
    return ok({ reference, environment: state.environment, status: state.status, amountKobo: state.initiatedKobo, paidKobo: state.paidKobo, feesKobo: state.feesKobo });
  }

  private owner(request: ConsoleRequest, query: Record<string, unknown> | undefined): { organizationId: string; environment: Environment } {
    const environment = query?.environment ?? 'test';
    if (!isEnvironment(environment)) throw new ValidationFailed([{ field: 'environment', message: 'environment must be "test" or "live"' }]);
    return { organizationId: organizationOf(consoleIdentity(request).user), environment };
  }
}

/** `?month=YYYY-MM` (and `format=json` for the figures alone). */
function statementMonth(query: Record<string, unknown> | undefined): string {
  const month = query?.month;
  if (typeof month !== 'string' || !STATEMENT_MONTH.test(month)) throw new ValidationFailed([{ field: 'month', message: 'must be a month as YYYY-MM' }]);
  return month;
}

async function sendStatement(reply: FastifyReply, statement: WalletStatement, format: unknown): Promise<void> {
  if (format === 'json') {
    void reply.status(200).send(ok(statement));
    return;
  }
  const pdf = await statementPdf(statement);
  void reply
    .status(200)
    .header('content-type', 'application/pdf')
    .header('content-disposition', `attachment; filename="statement-${statement.environment}-${statement.month}.pdf"`)
    .send(pdf);
}

/**
 * Monthly statements, computed by the auditor's replay of the wallet stream: for the organization's
 * owners and finance members, and for operators (any organization).
 */
@Controller('console/api')
@UseGuards(ConsoleGuard)
export class ConsoleStatementsController {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(TopUps) private readonly topUps: TopUps,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
  ) {}

  /** The organization's dedicated account for bank transfers (null before one is asked for). */
  @Get('wallet/dedicated_account')
  @ConsoleAccess({ who: 'integrator', roles: FINANCE })
  @ConsoleRoute('getDedicatedAccount', 'Wallet', "The wallet's dedicated bank account, if any", { status: 200, data: { anyOf: [ref('DedicatedAccount'), { type: 'null' }] } })
  async account(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<DedicatedAccountView | null>> {
    return ok(await this.topUps.dedicatedAccount(this.owner(request, query)));
  }

  @Post('wallet/dedicated_account')
  @HttpCode(201)
  @ConsoleAccess({ who: 'integrator', roles: FINANCE })
  @ConsoleRoute('assignDedicatedAccount', 'Wallet', 'Assign a dedicated bank account', { status: 201, data: ref('DedicatedAccount') })
  async assign(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<DedicatedAccountView>> {
    const { user } = consoleIdentity(request);
    return ok(await this.topUps.assignDedicatedAccount(this.owner(request, query), user.email, commandContext(request, userActor(user))));
  }

  /**
   * The sandbox's stand-in for a payer's bank transfer into the test wallet's dedicated account: the
   * rail sends the webhook Paystack sends for one, through the same receiver, which credits it once.
   * Test wallets only: a live wallet's transfers are real money.
   */
  @Post('wallet/dedicated_account/transfers')
  @HttpCode(201)
  @ConsoleAccess({ who: 'integrator', roles: FINANCE })
  @ConsoleRoute(
    'simulateTransfer',
    'Wallet',
    "Simulate a bank transfer into the test wallet's dedicated account (sandbox only)",
    { status: 201, data: ref('SimulatedTransfer') },
    jsonBody(ref('TopUpInput')),
  )
  async simulateTransfer(
    @Req() request: ConsoleRequest,
    @Query() query: Record<string, unknown>,
    @Body() body: unknown,
  ): Promise<SuccessEnvelope<{ reference: string; outcome: WebhookOutcome }>> {
    const owner = this.owner(request, query);
    const amountKobo = (body as { amountKobo?: unknown } | null)?.amountKobo;
    const errors = [];
    if (owner.environment !== 'test') errors.push({ field: 'environment', message: 'transfers are simulated in the test environment only' });
    if (typeof amountKobo !== 'number' || !Number.isSafeInteger(amountKobo) || amountKobo < 100 || amountKobo > MAX_FUNDING_KOBO)
      errors.push({ field: 'amountKobo', message: `must be an integer number of kobo from 100 to ${MAX_FUNDING_KOBO}` });
    if (errors.length > 0) throw new ValidationFailed(errors);
    const account = await this.topUps.dedicatedAccount(owner);
    if (account?.status !== 'assigned') throw new NotFound('No transfer account for this wallet: get one first');
    const transfer = await this.topUps.sandbox.simulateTransfer(owner.organizationId, amountKobo as number);
    const outcome = await this.topUps.receiveWebhook('sandbox', transfer.rawBody, transfer.signature);
    return ok({ reference: transfer.reference, outcome });
  }

  private owner(request: ConsoleRequest, query: Record<string, unknown> | undefined): { organizationId: string; environment: Environment } {
    const environment = query?.environment ?? 'test';
    if (!isEnvironment(environment)) throw new ValidationFailed([{ field: 'environment', message: 'environment must be "test" or "live"' }]);
    return { organizationId: organizationOf(consoleIdentity(request).user), environment };
  }

  @Get('wallet/statement')
  @ConsoleAccess({ who: 'integrator', roles: FINANCE })
  @ConsoleRoute('getStatement', 'Wallet', 'A monthly statement: PDF, or JSON with format=json', { status: 200, file: 'application/pdf', json: ref('WalletStatement') })
  async own(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    const environment = query?.environment ?? 'test';
    if (!isEnvironment(environment)) throw new ValidationFailed([{ field: 'environment', message: 'environment must be "test" or "live"' }]);
    const wallet = { organizationId: organizationOf(consoleIdentity(request).user), environment };
    await sendStatement(reply, await walletStatement(this.store, wallet, statementMonth(query)), query?.format);
  }

  @Get('operator/organizations/:id/wallets/:environment/statement')
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('getOrganizationStatement', 'Operator', "An organization's monthly statement: PDF, or JSON with format=json", {
    status: 200,
    file: 'application/pdf',
    json: ref('WalletStatement'),
  })
  async any(@Param('id') organizationId: string, @Param('environment') environment: string, @Query() query: Record<string, unknown>, @Res() reply: FastifyReply): Promise<void> {
    if (!isEnvironment(environment)) throw new ValidationFailed([{ field: 'environment', message: 'environment must be "test" or "live"' }]);
    await assertOrganizationExists(this.store, organizationId);
    await sendStatement(reply, await walletStatement(this.store, { organizationId, environment }, statementMonth(query)), query?.format);
  }

  @Get('operator/organizations/:id/wallets/:environment/topups')
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('listOrganizationTopUps', 'Operator', "An organization's top-ups in one environment", { status: 200, data: list(ref('TopUp')), meta: ref('PagingMeta') })
  async topUpsOf(@Param('id') organizationId: string, @Param('environment') environment: string, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<TopUpView[]>> {
    if (!isEnvironment(environment)) throw new ValidationFailed([{ field: 'environment', message: 'environment must be "test" or "live"' }]);
    await assertOrganizationExists(this.store, organizationId);
    const { page, pageSize } = paging(query ?? {});
    const { total, topUps } = await readTopUps(this.pool, organizationId, environment, page, pageSize);
    return ok(topUps, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }

  /** Any organization's receipt, for operators (auditors included): the integrators' receipt, byte for byte. */
  @Get('operator/organizations/:id/topups/:reference/receipt.pdf')
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('getOrganizationTopUpReceipt', 'Operator', "A credited top-up's receipt", { status: 200, file: 'application/pdf' })
  async receiptOf(@Param('id') organizationId: string, @Param('reference') reference: string, @Res() reply: FastifyReply): Promise<void> {
    await assertOrganizationExists(this.store, organizationId);
    sendReceipt(reply, reference, await topUpReceipt(this.pool, organizationId, reference));
  }
}

/**
 * The operators' Payments page: the top-ups across organizations that need a person (flagged, or
 * settled at the provider and not credited), the provider's figures beside ours, and their
 * resolution. Auditors read it; only an admin operator resolves.
 */
@Controller('console/api/operator/payments')
@UseGuards(ConsoleGuard)
export class ConsolePaymentsController {
  constructor(@Inject(TopUpResolutions) private readonly resolutions: TopUpResolutions) {}

  @Get()
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('listPaymentsNeedingAttention', 'Operator', 'The top-ups that need an operator, with the provider’s figures', { status: 200, data: list(ref('PaymentAttention')) })
  async attention(): Promise<SuccessEnvelope<PaymentAttention[]>> {
    return ok(await this.resolutions.attention());
  }

  @Post(':reference/resolution')
  @HttpCode(200)
  @ConsoleAccess({ who: 'operator', write: true })
  @ConsoleRoute(
    'resolveTopUp',
    'Operator',
    'Resolve a top-up: credit the settled amount once, or dismiss it for a reason',
    { status: 200, data: ref('ResolvedTopUp') },
    jsonBody(ref('TopUpResolutionInput')),
  )
  async resolve(@Req() request: ConsoleRequest, @Param('reference') reference: string, @Body() body: unknown): Promise<SuccessEnvelope<ResolvedTopUp>> {
    const state = await this.resolutions.resolve(reference, resolutionOf(body), commandContext(request, userActor(consoleIdentity(request).user)));
    return ok(resolvedView(state));
  }
}
