import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type pg from 'pg';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { isEnvironment, type Environment } from '../common/environment.js';
import { NotFound, ValidationFailed } from '../common/errors.js';
import { paging } from '../common/paging.js';
import { commandContext } from '../common/request-context.js';
import { ConsoleAccess, consoleIdentity, ConsoleGuard, organizationOf, userActor, type ConsoleRequest } from '../console-auth/console.guard.js';
import { PG_POOL } from '../database/pool.js';
import { walletStatement, statementPdf, STATEMENT_MONTH, type WalletStatement } from '../audit/wallet-statement.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { reconcileWalletPayments, type WalletPaymentsReconciliation } from '../payments/payment-reconciliation.js';
import { receiptPdf } from '../payments/receipt.pdf.js';
import { readTopUpReceipt, readTopUps, type DedicatedAccountView, type TopUpView } from '../payments/topup.read-model.js';
import { TOPUP_REFERENCE, TopUps, TRANSFER_REFERENCE } from '../payments/topups.service.js';
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
    const row = TOPUP_REFERENCE.test(reference) || TRANSFER_REFERENCE.test(reference) ? await readTopUpReceipt(this.pool, reference) : undefined;
    if (row === undefined || row.organizationId !== organizationOf(consoleIdentity(request).user) || row.status !== 'credited')
      throw new NotFound('No credited top-up with this reference');
    const pdf = await receiptPdf({
      reference,
      organizationId: row.organizationId,
      environment: row.environment,
      rail: row.rail,
      creditedKobo: row.creditedKobo ?? 0,
      feesKobo: row.feesKobo ?? 0,
      paidAt: row.paidAt ?? '',
      providerTransactionId: row.providerTransactionId ?? '',
    });
    void reply.status(200).header('content-type', 'application/pdf').header('content-disposition', `attachment; filename="receipt-${reference}.pdf"`).send(pdf);
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
    if (!/^org_[0-9A-HJKMNP-TV-Z]{26}$/.test(organizationId) || (await this.store.readStream(`organization-${organizationId}`, { maxCount: 1 })).length === 0)
      throw new NotFound('No organization with this id');
    await sendStatement(reply, await walletStatement(this.store, { organizationId, environment }, statementMonth(query)), query?.format);
  }
}
