import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Query, Req, Res, UseGuards } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { FastifyReply } from 'fastify';
import type pg from 'pg';
import { ApiKeyGuard } from '../auth/api-key.guard.js';
import { csvField } from '../audit/audit-format.js';
import { Clock } from '../common/clock.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { isEnvironment, type Environment } from '../common/environment.js';
import { NotFound, ValidationFailed } from '../common/errors.js';
import { LastOwner } from './console.errors.js';
import { paging } from '../common/paging.js';
import { commandContext } from '../common/request-context.js';
import { isPlainObject, validateBody } from '../common/validation.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import { AccountEvents } from '../console-auth/account-events.js';
import { AccountStore, hasSecondFactor } from '../console-auth/accounts.js';
import { ALL_INTEGRATOR_ROLES, ConsoleAccess, consoleIdentity, ConsoleGuard, organizationOf, userActor, type ConsoleRequest } from '../console-auth/console.guard.js';
import { Outbox } from '../console-auth/outbox.js';
import { Sessions } from '../console-auth/sessions.js';
import { GetConsoleOrganization } from '../organizations/organization.queries.js';
import { ReadYourWrites } from '../read-models/read-your-writes.js';
import { scopeDefinition, SCOPES } from '../scopes/scopes.js';
import { DataSubjectRights } from '../verifications/data-subject-rights.js';
import { GetVerification, ListVerifications, RunVerification } from '../verifications/verification.commands.js';
import { scopeExample } from '../verifications/verification-inputs.js';
import { REFERENCE_PATTERN } from '../verifications/verification.queries.js';
import type { VerificationSummary, VerificationView } from '../verifications/verification.views.js';
import { readWalletBalance, readWalletTransactions, WALLET_LEDGER_PROJECTION, WALLETS_PROJECTION, type TransactionView } from '../wallets/wallet.read-model.js';
import { ConsoleLinks } from './console-links.js';
import { INVITATION_TTL_MS } from './console-session.service.js';
import { InviteMemberDto, SetRoleDto } from './console.dto.js';
import { ConsoleRoute, jsonBody, list } from '../common/console-route.js';
import { ref } from '../common/openapi.js';

const OVERVIEW_DAYS = 30;
const RECENT_CHECKS = 10;
/** Rows of one CSV export, newest first: beyond this, the finance audit's own CSV covers a wallet. */
const MAX_CSV_ROWS = 100_000;
const CSV_PAGE = 1_000;
const DEVELOPERS = ['owner', 'developer'] as const;
const FINANCE = ['owner', 'finance'] as const;

interface DayCount {
  readonly date: string;
  readonly scope: string;
  readonly status: string;
  readonly count: number;
}

function environmentOf(query: Record<string, unknown> | undefined, field = 'environment'): Environment {
  const value = query?.[field] ?? 'test';
  if (!isEnvironment(value)) throw new ValidationFailed([{ field, message: 'environment must be "test" or "live"' }]);
  return value;
}

/**
 * The integrators' pages: overview, scopes, verifications, wallet, playground and team. Reads go
 * through the REST API's own query handlers and read models, the playground through the same
 * command handler as POST /v1/{scope}, on one of the organization's keys, with the user as actor.
 */
@Controller('console/api')
@UseGuards(ConsoleGuard)
export class ConsoleIntegratorController {
  constructor(
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(ApiKeyGuard) private readonly keys: ApiKeyGuard,
    @Inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
    @Inject(DataSubjectRights) private readonly erasure: DataSubjectRights,
    @Inject(AccountStore) private readonly accounts: AccountStore,
    @Inject(AccountEvents) private readonly events: AccountEvents,
    @Inject(Sessions) private readonly sessions: Sessions,
    @Inject(Outbox) private readonly outbox: Outbox,
    @Inject(ConsoleLinks) private readonly links: ConsoleLinks,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('overview')
  @ConsoleAccess({ who: 'integrator', roles: ALL_INTEGRATOR_ROLES })
  @ConsoleRoute('getOverview', 'Checks', 'The wallet, checks per day for 30 days and the latest checks', { status: 200, data: ref('Overview') })
  async overview(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Query() query: Record<string, unknown>) {
    const owner = this.owner(request, query);
    await this.readYourWrites.beforeRead(request, reply, owner, 'wallet', [WALLETS_PROJECTION]);
    await this.readYourWrites.beforeRead(request, reply, owner, 'verification', ['verifications']);
    const since = new Date(this.clock.now().getTime() - (OVERVIEW_DAYS - 1) * 86_400_000);
    since.setUTCHours(0, 0, 0, 0);
    const [wallet, days, recent] = await Promise.all([
      readWalletBalance(this.pool, owner.organizationId, owner.environment),
      this.pool.query<{ date: string; scope: string; status: string; count: string }>(
        `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as date, scope, status, count(*) as count
           from verifications where organization_id = $1 and environment = $2 and created_at >= $3
          group by 1, 2, 3 order by 1, 2, 3`,
        [owner.organizationId, owner.environment, since],
      ),
      this.queries.execute(new ListVerifications(owner, { pageSize: String(RECENT_CHECKS) })),
    ]);
    const counts: DayCount[] = days.rows.map((row) => ({ date: row.date, scope: row.scope, status: row.status, count: Number(row.count) }));
    return ok({
      environment: owner.environment,
      since: since.toISOString().slice(0, 10),
      wallet: { environment: owner.environment, ...wallet },
      days: counts,
      recent: recent.data,
    });
  }

  /** The scopes, their inputs (each with a valid value, and the media types of those that are a file), a request the sandbox answers `found`, whether active, and the organization's price. */
  @Get('scopes')
  @ConsoleAccess({ who: 'integrator', roles: ALL_INTEGRATOR_ROLES })
  @ConsoleRoute('listScopes', 'Checks', 'The scopes: inputs, example, whether active and the price', { status: 200, data: list(ref('ScopeInfo')) })
  async scopes(@Req() request: ConsoleRequest) {
    const organization = await this.queries.execute(new GetConsoleOrganization(organizationOf(consoleIdentity(request).user)));
    return ok(
      SCOPES.map((scope) => ({
        scope,
        active: organization.activeScopes.includes(scope),
        priceKobo: organization.prices[scope] ?? this.config.verifications.pricesKobo[scope],
        example: scopeExample(scope),
        fields: Object.entries(scopeDefinition(scope).inputs).map(([name, rule]) => ({
          name,
          required: rule.required,
          description: rule.format.description,
          example: rule.format.example,
          ...(rule.format.mediaTypes === undefined ? {} : { mediaTypes: rule.format.mediaTypes }),
        })),
      })),
    );
  }

  @Get('verifications')
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('listVerifications', 'Checks', 'The checks run', { status: 200, data: list(ref('VerificationSummary')), meta: ref('PagingMeta') })
  async verifications(
    @Req() request: ConsoleRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Query() query: Record<string, unknown>,
  ): Promise<SuccessEnvelope<VerificationSummary[]>> {
    const owner = this.owner(request, query);
    const { environment: _environment, ...filters } = query ?? {};
    await this.readYourWrites.beforeRead(request, reply, owner, 'verification', ['verifications']);
    const page = await this.queries.execute(new ListVerifications(owner, filters));
    return ok(page.data, page.meta);
  }

  @Get('verifications/:reference')
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('getVerification', 'Checks', 'One check', { status: 200, data: ref('Verification') })
  async verification(@Req() request: ConsoleRequest, @Param('reference') reference: string, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<VerificationView>> {
    return ok(await this.queries.execute(new GetVerification(this.owner(request, query), reference)));
  }

  @Post('verifications/:reference/erasure')
  @HttpCode(200)
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('eraseVerification', 'Checks', "Erase a check's personal data", { status: 200, data: ref('Verification') })
  async erase(@Req() request: ConsoleRequest, @Param('reference') reference: string, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<VerificationView>> {
    const owner = this.owner(request, query);
    if (!REFERENCE_PATTERN.test(reference)) throw new NotFound('No verification with this reference');
    return ok(await this.erasure.erase(reference, owner, commandContext(request, userActor(consoleIdentity(request).user))));
  }

  @Get('wallet')
  @ConsoleAccess({ who: 'integrator', roles: FINANCE })
  @ConsoleRoute('getWallet', 'Wallet', 'The balance', { status: 200, data: ref('Wallet') })
  async wallet(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Query() query: Record<string, unknown>) {
    const owner = this.owner(request, query);
    await this.readYourWrites.beforeRead(request, reply, owner, 'wallet', [WALLETS_PROJECTION]);
    return ok({ environment: owner.environment, ...(await readWalletBalance(this.pool, owner.organizationId, owner.environment)) });
  }

  @Get('wallet/transactions')
  @ConsoleAccess({ who: 'integrator', roles: FINANCE })
  @ConsoleRoute('listTransactions', 'Wallet', "The wallet's transactions", { status: 200, data: list(ref('WalletTransaction')), meta: ref('PagingMeta') })
  async transactions(
    @Req() request: ConsoleRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Query() query: Record<string, unknown>,
  ): Promise<SuccessEnvelope<TransactionView[]>> {
    const owner = this.owner(request, query);
    const { environment: _environment, ...rest } = query ?? {};
    const { page, pageSize } = paging(rest);
    await this.readYourWrites.beforeRead(request, reply, owner, 'wallet', [WALLET_LEDGER_PROJECTION]);
    const { total, transactions } = await readWalletTransactions(this.pool, owner.organizationId, owner.environment, page, pageSize);
    return ok(transactions, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }

  @Get('wallet/transactions.csv')
  @ConsoleAccess({ who: 'integrator', roles: FINANCE })
  @ConsoleRoute('exportTransactions', 'Wallet', "The wallet's transactions as CSV", { status: 200, file: 'text/csv' })
  async transactionsCsv(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Query() query: Record<string, unknown>): Promise<string> {
    const owner = this.owner(request, query);
    await this.readYourWrites.beforeRead(request, reply, owner, 'wallet', [WALLET_LEDGER_PROJECTION]);
    const lines = ['createdAt,type,reference,scope,amountKobo,balanceKobo,reservedKobo,availableKobo'];
    for (let page = 1; (page - 1) * CSV_PAGE < MAX_CSV_ROWS; page++) {
      const { transactions } = await readWalletTransactions(this.pool, owner.organizationId, owner.environment, page, CSV_PAGE);
      for (const t of transactions) {
        lines.push(
          [csvField(t.createdAt), csvField(t.type), csvField(t.reference, { text: true }), csvField(t.scope), t.amountKobo, t.balanceKobo, t.reservedKobo, t.availableKobo].join(
            ',',
          ),
        );
      }
      if (transactions.length < CSV_PAGE) break;
    }
    void reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="wallet-${owner.environment}-transactions.csv"`)
      .header('cache-control', 'no-store');
    return `${lines.join('\r\n')}\r\n`;
  }

  /**
   * A check from the console, through the same command as POST /v1/{scope}, on the key the user
   * picks or the organization's newest active key of the environment.
   */
  @Post('playground/:scope')
  @HttpCode(201)
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('runPlaygroundCheck', 'Checks', "Run a check on one of the organization's keys", { status: 201, data: ref('Verification') }, jsonBody(ref('PlaygroundInput')))
  async playground(
    @Req() request: ConsoleRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Param('scope') scope: string,
    @Body() body: unknown,
  ): Promise<SuccessEnvelope<VerificationView>> {
    const { user } = consoleIdentity(request);
    if (!isPlainObject(body)) throw new ValidationFailed([{ field: 'body', message: 'the body must be a JSON object' }]);
    const environment = environmentOf(body);
    const keyId = body.keyId;
    if (keyId !== undefined && (typeof keyId !== 'string' || keyId.length > 40))
      throw new ValidationFailed([{ field: 'keyId', message: 'keyId must be the id of one of your keys' }]);
    const key = await this.keys.admitOwnKey(organizationOf(user), environment, keyId ?? null, reply);
    if (key === undefined) throw new NoActiveKey(`No active ${environment} key${keyId === undefined ? '' : ' with that id'}: create one on the API keys page first`);
    try {
      return ok(await this.commands.execute(new RunVerification(key, scope, body.input ?? {}, commandContext(request, userActor(user)))));
    } finally {
      this.readYourWrites.answerToken(reply, key);
    }
  }

  @Get('team')
  @ConsoleAccess({ who: 'integrator', roles: ALL_INTEGRATOR_ROLES })
  @ConsoleRoute('getTeam', 'Organization', 'Members and open invitations', { status: 200, data: ref('Team') })
  async team(@Req() request: ConsoleRequest) {
    const { user } = consoleIdentity(request);
    const organizationId = organizationOf(user);
    const [members, invitations] = await Promise.all([this.accounts.members(organizationId), this.accounts.invitations(organizationId, this.clock.now())]);
    return ok({
      members: members.map((member) => ({
        id: member.id,
        email: member.email,
        role: member.role,
        emailVerified: member.emailVerifiedAt !== null,
        secondFactor: hasSecondFactor(member),
        createdAt: member.createdAt.toISOString(),
        you: member.id === user.id,
      })),
      invitations: invitations.map((invitation) => ({
        id: invitation.id,
        email: invitation.email,
        role: invitation.role,
        createdAt: invitation.createdAt.toISOString(),
        expiresAt: invitation.expiresAt.toISOString(),
      })),
    });
  }

  @Post('team/invitations')
  @HttpCode(201)
  @ConsoleAccess({ who: 'integrator', roles: ['owner'] })
  @ConsoleRoute('inviteMember', 'Organization', 'Invite a member', { status: 201, data: ref('InvitationSent') }, jsonBody(ref('MemberInvitationInput')))
  async invite(@Req() request: ConsoleRequest, @Body() body: unknown) {
    const { user } = consoleIdentity(request);
    const input = validateBody(InviteMemberDto, body);
    const organizationId = organizationOf(user);
    const organization = await this.queries.execute(new GetConsoleOrganization(organizationId));
    const id = await this.events.record(commandContext(request, userActor(user)), async (db) => {
      const { token, id } = await this.accounts.createToken(
        { purpose: 'invitation', userId: null, kind: 'integrator', organizationId, email: input.email, role: input.role, now: this.clock.now(), ttlMs: INVITATION_TTL_MS },
        db,
      );
      const link = this.links.page('accept-invitation', token);
      await this.outbox.enqueue(
        {
          to: input.email,
          subject: `You are invited to ${organization.name}'s console`,
          text: `${user.email} invites you to the console of ${organization.name} as ${input.role}:\n\n${link}\n\nThe link works once, for 7 days.`,
          link,
        },
        db,
      );
      return {
        value: id,
        events: [{ type: 'ConsoleInvitationSent', data: { schemaVersion: 1, userId: user.id, invitationId: id, kind: 'integrator', organizationId, role: input.role } }],
      };
    });
    return ok({ id, email: input.email, role: input.role });
  }

  @Delete('team/invitations/:id')
  @HttpCode(204)
  @ConsoleAccess({ who: 'integrator', roles: ['owner'] })
  @ConsoleRoute('withdrawInvitation', 'Organization', 'Withdraw an invitation', { status: 204 })
  async withdraw(@Req() request: ConsoleRequest, @Param('id') id: string): Promise<void> {
    const { user } = consoleIdentity(request);
    const organizationId = organizationOf(user);
    const withdrawn = await this.events.record(commandContext(request, userActor(user)), async (db) => {
      const done = await this.accounts.withdrawInvitation(id, organizationId, this.clock.now(), db);
      return { value: done, events: done ? [{ type: 'ConsoleInvitationWithdrawn', data: { schemaVersion: 1, userId: user.id, invitationId: id, organizationId } }] : [] };
    });
    if (!withdrawn) throw new NotFound('No open invitation with that id');
  }

  @Put('team/members/:id')
  @ConsoleAccess({ who: 'integrator', roles: ['owner'] })
  @ConsoleRoute('setMemberRole', 'Organization', "Change a member's role", { status: 200, data: ref('MemberRole') }, jsonBody(ref('RoleInput')))
  async setRole(@Req() request: ConsoleRequest, @Param('id') id: string, @Body() body: unknown) {
    const { role } = validateBody(SetRoleDto, body);
    const member = await this.member(request, id);
    if (member.role === 'owner' && role !== 'owner') await this.assertAnotherOwner(member.organizationId as string, member.id);
    const organizationId = member.organizationId as string;
    await this.events.record(commandContext(request, userActor(consoleIdentity(request).user)), async (db) => {
      await this.accounts.setRole(member.id, role, db);
      return {
        value: undefined,
        events: member.role === role ? [] : [{ type: 'ConsoleMemberRoleChanged', data: { schemaVersion: 1, userId: member.id, organizationId, role, previousRole: member.role } }],
      };
    });
    return ok({ id: member.id, email: member.email, role });
  }

  @Delete('team/members/:id')
  @HttpCode(204)
  @ConsoleAccess({ who: 'integrator', roles: ['owner'] })
  @ConsoleRoute('removeMember', 'Organization', 'Remove a member', { status: 204 })
  async removeMember(@Req() request: ConsoleRequest, @Param('id') id: string): Promise<void> {
    const member = await this.member(request, id);
    if (member.role === 'owner') await this.assertAnotherOwner(member.organizationId as string, member.id);
    const organizationId = member.organizationId as string;
    await this.events.record(commandContext(request, userActor(consoleIdentity(request).user)), async (db) => {
      await this.sessions.revokeAll(member.id, this.clock.now(), null, db);
      await this.accounts.remove(member.id, db);
      return { value: undefined, events: [{ type: 'ConsoleMemberRemoved', data: { schemaVersion: 1, userId: member.id, organizationId, role: member.role } }] };
    });
  }

  private async member(request: ConsoleRequest, id: string) {
    const member = await this.accounts.byId(id);
    if (member === undefined || member.organizationId !== organizationOf(consoleIdentity(request).user)) throw new NotFound('No member with that id');
    return member;
  }

  private async assertAnotherOwner(organizationId: string, exceptId: string): Promise<void> {
    const members = await this.accounts.members(organizationId);
    if (!members.some((member) => member.role === 'owner' && member.id !== exceptId)) throw new LastOwner('An organization keeps at least one owner');
  }

  /** The organization and environment the page shows: the user's, and `?environment=` (test by default). */
  private owner(request: ConsoleRequest, query: Record<string, unknown> | undefined): { organizationId: string; environment: Environment } {
    return { organizationId: organizationOf(consoleIdentity(request).user), environment: environmentOf(query) };
  }
}

class NoActiveKey extends ValidationFailed {
  constructor(message: string) {
    super([{ field: 'keyId', message }], message);
  }
}
