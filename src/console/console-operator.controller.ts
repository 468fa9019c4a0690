import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res, UseGuards, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import type pg from 'pg';
import { CsvWriter, entryJson, summaryJson } from '../audit/audit-format.js';
import { reconcileWallet } from '../audit/reconcile.js';
import { WalletReplay } from '../audit/wallet-replay.js';
import { readUnsettledChecks } from '../verifications/recovery-unsettled.read-model.js';
import { Clock } from '../common/clock.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { isEnvironment, type Environment } from '../common/environment.js';
import { ValidationFailed, type FieldError } from '../common/errors.js';
import { paging } from '../common/paging.js';
import { commandContext } from '../common/request-context.js';
import { parseIsoInstant } from '../common/time.js';
import { validateBody } from '../common/validation.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { AccountEvents } from '../console-auth/account-events.js';
import { AccountStore } from '../console-auth/accounts.js';
import { ConsoleAccess, consoleIdentity, ConsoleGuard, userActor, type ConsoleRequest } from '../console-auth/console.guard.js';
import { Outbox } from '../console-auth/outbox.js';
import { PROJECTION_WAIT_MS, ProjectionWaiter } from '../read-models/projection-waiter.js';
import { PROJECTION_STATUS, type ProjectionLagSnapshot, type ReadProjectionStatus } from '../read-models/projection-status.port.js';
import { assertOrganizationExists } from '../wallets/organization-exists.js';
import { FundWalletDto } from '../wallets/operator-wallets.controller.js';
import { WalletLedger } from '../wallets/wallet-ledger.port.js';
import { WALLET_PROJECTIONS } from '../wallets/wallet.read-model.js';
import { ConsoleLinks } from './console-links.js';
import { INVITATION_TTL_MS } from './console-session.service.js';
import { InviteOperatorDto } from './console.dto.js';
import { ConsoleRoute, jsonBody, list } from '../common/console-route.js';
import { ref } from '../common/openapi.js';

/** Lag samples kept per process: one every 10 s for an hour. */
const LAG_SAMPLE_INTERVAL_MS = 10_000;
const LAG_SAMPLES = 360;
/** Entries of one audit CSV download; the audit CLI has no such bound. */
const MAX_AUDIT_CSV_ENTRIES = 100_000;

interface LagSample {
  readonly at: string;
  readonly projections: readonly { readonly name: string; readonly lagEvents: number | null; readonly lagSeconds: number }[];
}

function walletOf(organizationId: string, environment: string, asOf: unknown): { wallet: { organizationId: string; environment: Environment }; asOf: Date | undefined } {
  const errors: FieldError[] = [];
  if (!isEnvironment(environment)) errors.push({ field: 'environment', message: 'environment must be "test" or "live"' });
  let at: Date | undefined;
  if (asOf !== undefined && asOf !== '') {
    at = typeof asOf === 'string' ? parseIsoInstant(asOf) : undefined;
    if (at === undefined) errors.push({ field: 'asOf', message: 'asOf must be an ISO 8601 date-time with an offset, e.g. 2026-03-03T14:00:00+01:00' });
  }
  if (errors.length > 0) throw new ValidationFailed(errors);
  return { wallet: { organizationId, environment: environment as Environment }, asOf: at };
}

/**
 * The operators' console beyond organizations and keys: funding wallets (the wallet ledger, as the
 * admin API funds), the projections and their lag over time, a wallet's audit (the finance audit's
 * replay and reconciliation, read from the event log), and the operators' own accounts.
 */
@Controller('console/api/operator')
@UseGuards(ConsoleGuard)
export class ConsoleOperatorController implements OnModuleInit, OnModuleDestroy {
  private readonly lag: LagSample[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(WalletLedger) private readonly ledger: WalletLedger,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(ProjectionWaiter) private readonly waiter: ProjectionWaiter,
    @Inject(PROJECTION_STATUS) private readonly projectionStatus: ReadProjectionStatus,
    @Inject(AccountStore) private readonly accounts: AccountStore,
    @Inject(AccountEvents) private readonly events: AccountEvents,
    @Inject(Outbox) private readonly outbox: Outbox,
    @Inject(ConsoleLinks) private readonly links: ConsoleLinks,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.sample().catch(() => undefined), LAG_SAMPLE_INTERVAL_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** 201 when the reference credits the wallet, 200 when it already credited this amount, 409 when it credited another. */
  @Post('organizations/:id/wallets/:environment/fundings')
  @ConsoleAccess({ who: 'operator', write: true })
  @ConsoleRoute(
    'fundWallet',
    'Operator',
    'Fund a wallet (201 credited, 200 already credited with this reference)',
    { status: [200, 201], data: ref('OrganizationWallet') },
    jsonBody(ref('Funding')),
  )
  async fund(
    @Req() request: ConsoleRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') organizationId: string,
    @Param('environment') environment: string,
    @Body() body: unknown,
  ) {
    const { wallet } = walletOf(organizationId, environment, undefined);
    const input = validateBody(FundWalletDto, body);
    await assertOrganizationExists(this.store, organizationId);
    const result = await this.ledger.fund(
      wallet,
      { fundingReference: input.reference, amountKobo: input.amountKobo },
      commandContext(request, userActor(consoleIdentity(request).user)),
    );
    if (result.position !== undefined && result.position > 0n) await this.waiter.waitFor(WALLET_PROJECTIONS, result.position, PROJECTION_WAIT_MS);
    void reply.status(result.funded ? 201 : 200);
    return ok({ ...wallet, ...result.balance });
  }

  @Get('projections')
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('getProjections', 'Operator', 'The projections and their lag over the last hour', { status: 200, data: ref('Projections') })
  async projections(): Promise<SuccessEnvelope<{ projections: readonly ProjectionLagSnapshot[]; history: readonly LagSample[] }>> {
    const projections = await this.sample();
    return ok({ projections, history: this.lag });
  }

  /** The checks recovery cannot settle (their money held until an operator restores the cause), oldest first: as GET /admin/v1/recovery/unsettled lists them. */
  @Get('recovery/unsettled')
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('listUnsettledChecks', 'Operator', 'The checks recovery cannot settle, oldest first', { status: 200, data: list(ref('UnsettledCheck')), meta: ref('PagingMeta') })
  async unsettled(@Query() query: Record<string, unknown>) {
    const { page, pageSize } = paging(query);
    const { checks, total } = await readUnsettledChecks(this.pool, page, pageSize);
    return ok(checks, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }

  /** The finance audit's replay from the event log, as of `asOf`: a page of entries, the summary in meta. */
  @Get('organizations/:id/wallets/:environment/audit')
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('getWalletAudit', 'Operator', "A wallet's audit: the replay's entries, its summary in meta", {
    status: 200,
    data: list(ref('HistoryEntry')),
    meta: ref('AuditMeta'),
  })
  async audit(@Param('id') organizationId: string, @Param('environment') environment: string, @Query() query: Record<string, unknown>) {
    const { asOf: _asOf, ...rest } = query ?? {};
    const { wallet, asOf } = walletOf(organizationId, environment, query?.asOf);
    const { page, pageSize } = paging(rest);
    await assertOrganizationExists(this.store, organizationId);
    const replay = new WalletReplay(this.store, wallet, { to: asOf });
    const first = (page - 1) * pageSize;
    const entries: Record<string, unknown>[] = [];
    let index = 0;
    for await (const entry of replay.entries()) {
      if (index >= first && index < first + pageSize) entries.push(entryJson(entry));
      index++;
    }
    return ok(entries, { page, pageSize, total: index, totalPages: Math.ceil(index / pageSize), summary: summaryJson(replay.summary) });
  }

  @Get('organizations/:id/wallets/:environment/audit.csv')
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('exportWalletAudit', 'Operator', "A wallet's audit as CSV", { status: 200, file: 'text/csv' })
  async auditCsv(
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('id') organizationId: string,
    @Param('environment') environment: string,
    @Query() query: Record<string, unknown>,
  ): Promise<string> {
    const { wallet, asOf } = walletOf(organizationId, environment, query?.asOf);
    await assertOrganizationExists(this.store, organizationId);
    const writer = new CsvWriter();
    const parts = [writer.begin()];
    let count = 0;
    for await (const entry of new WalletReplay(this.store, wallet, { to: asOf }).entries()) {
      if (count++ >= MAX_AUDIT_CSV_ENTRIES) break;
      parts.push(writer.entry(entry));
    }
    void reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="audit-${organizationId}-${wallet.environment}.csv"`)
      .header('cache-control', 'no-store');
    return parts.join('');
  }

  /** The audit's reconciliation of the replay against the read models the API answers from. */
  @Get('organizations/:id/wallets/:environment/reconcile')
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('reconcileWallet', 'Operator', "A wallet's replay against the read models", { status: 200, data: ref('Reconciliation') })
  async reconcile(@Param('id') organizationId: string, @Param('environment') environment: string) {
    const { wallet } = walletOf(organizationId, environment, undefined);
    await assertOrganizationExists(this.store, organizationId);
    const result = await reconcileWallet(this.store, this.pool, wallet, {
      recoveryDeadlineMs: this.config.verifications.recoveryDeadlineMs,
      waitMs: PROJECTION_WAIT_MS,
      now: () => this.clock.now(),
    });
    return ok({ summary: summaryJson(result.summary), differences: result.differences, differenceCount: result.differenceCount, notes: result.notes });
  }

  @Get('operators')
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('getOperators', 'Operator', 'The operators and open invitations', { status: 200, data: ref('Operators') })
  async operators() {
    const [operators, invitations] = await Promise.all([this.accounts.operators(), this.accounts.invitations(null, this.clock.now())]);
    return ok({
      operators: operators.map((user) => ({ id: user.id, email: user.email, role: user.role, totpEnabled: user.totpEnabledAt !== null, createdAt: user.createdAt.toISOString() })),
      invitations: invitations.map((invitation) => ({
        id: invitation.id,
        email: invitation.email,
        role: invitation.role,
        createdAt: invitation.createdAt.toISOString(),
        expiresAt: invitation.expiresAt.toISOString(),
      })),
    });
  }

  @Post('operators/invitations')
  @HttpCode(201)
  @ConsoleAccess({ who: 'operator', write: true })
  @ConsoleRoute('inviteOperator', 'Operator', 'Invite an operator', { status: 201, data: ref('InvitationSent') }, jsonBody(ref('OperatorInvitationInput')))
  async invite(@Req() request: ConsoleRequest, @Body() body: unknown) {
    const input = validateBody(InviteOperatorDto, body);
    const { user } = consoleIdentity(request);
    const id = await this.events.record(commandContext(request, userActor(user)), async (db) => {
      const { token, id } = await this.accounts.createToken(
        { purpose: 'invitation', userId: null, kind: 'operator', organizationId: null, email: input.email, role: input.role, now: this.clock.now(), ttlMs: INVITATION_TTL_MS },
        db,
      );
      const link = this.links.page('accept-invitation', token);
      await this.outbox.enqueue(
        {
          to: input.email,
          subject: "You are invited to the operators' console",
          text: `${user.email} invites you to the operators' console as ${input.role}:\n\n${link}\n\nThe link works once, for 7 days. You will set up a second factor (TOTP) on first sign-in.`,
          link,
        },
        db,
      );
      return {
        value: id,
        events: [{ type: 'ConsoleInvitationSent', data: { schemaVersion: 1, userId: user.id, invitationId: id, kind: 'operator', organizationId: null, role: input.role } }],
      };
    });
    return ok({ id, email: input.email, role: input.role });
  }

  /** Reads the status and keeps its lag figures (one sample per interval at most). */
  private async sample(): Promise<readonly ProjectionLagSnapshot[]> {
    const projections = await this.projectionStatus();
    const now = this.clock.now();
    const last = this.lag.at(-1);
    if (last === undefined || now.getTime() - new Date(last.at).getTime() >= LAG_SAMPLE_INTERVAL_MS - 500) {
      this.lag.push({ at: now.toISOString(), projections: projections.map((p) => ({ name: p.name, lagEvents: p.lagEvents, lagSeconds: p.lagSeconds })) });
      if (this.lag.length > LAG_SAMPLES) this.lag.splice(0, this.lag.length - LAG_SAMPLES);
    }
    return projections;
  }
}
