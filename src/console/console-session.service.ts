import { type BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import { IdGenerator } from '../common/ids.js';
import { Forbidden, NotFound, Unauthenticated, ValidationFailed } from '../common/errors.js';
import { commandContext } from '../common/request-context.js';
import type { CommandContext } from '../common/event.js';
import { RUNTIME, type Runtime } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import { accountActor, AccountEvents } from '../console-auth/account-events.js';
import { AccountStore, hasSecondFactor, type ConsoleUser, type OneTimeToken } from '../console-auth/accounts.js';
import { userActor, type ConsoleIdentity } from '../console-auth/console.guard.js';
import { LoginThrottle } from '../console-auth/login-throttle.js';
import { Outbox } from '../console-auth/outbox.js';
import { assertStrongPassword } from '../console-auth/password-strength.js';
import { hashPassword, verifyPassword } from '../console-auth/passwords.js';
import { CSRF_COOKIE, requestCookies, Sessions } from '../console-auth/sessions.js';
import { consoleId, sameToken, secretToken } from '../console-auth/tokens.js';
import { Totp } from '../console-auth/totp.js';
import { validRegistration } from '../organizations/registration.js';
import { GetConsoleOrganization, GetOrganization, type ConsoleOrganizationView } from '../organizations/organization.queries.js';
import { ConsoleLinks } from './console-links.js';
import { InvalidCredentials, InvalidToken, LastOwner, TotpRefused } from './console.errors.js';
import { ContactData } from '../data-protection/contact-data.js';

const DAY_MS = 86_400_000;
const VERIFY_EMAIL_TTL_MS = 3 * DAY_MS;
const RESET_PASSWORD_TTL_MS = 60 * 60_000;
export const INVITATION_TTL_MS = 7 * DAY_MS;
/** The key every new organization gets for the playground, so that a test check runs right after sign-up. */
export const PLAYGROUND_KEY_NAME = 'Console playground';

/** A sign-up as its request leaves it: the fields checked, the password hashed, the ids the new organization and owner will have. */
export interface RecordedSignUp {
  readonly userId: string;
  readonly organizationId: string;
  readonly organizationName: string;
  readonly email: string;
  readonly passwordHash: string;
  readonly context: CommandContext;
}

export interface SessionView {
  readonly csrfToken: string;
  readonly user: null | {
    readonly id: string;
    readonly email: string;
    readonly kind: ConsoleUser['kind'];
    readonly role: ConsoleUser['role'];
    readonly emailVerified: boolean;
    readonly totpEnabled: boolean;
    /** Has a second factor (TOTP or a passkey). */
    readonly secondFactor: boolean;
    readonly hasPasskey: boolean;
    /** This session waits for the second factor: nothing else is open. */
    readonly secondFactorPending: boolean;
    /** The organization requires a second factor and the user has none: only its set-up is open. */
    readonly secondFactorEnrollmentRequired: boolean;
  };
  readonly organization: ConsoleOrganizationView | null;
  readonly expiresAt: string | null;
  readonly devMailbox: boolean;
}

/** The registration command names the fields as the admin API does; the sign-up form calls the name organizationName. */
function renamedFields(error: unknown): unknown {
  if (!(error instanceof ValidationFailed)) return error;
  return new ValidationFailed(
    error.fields.map((field) => (field.field === 'name' ? { field: 'organizationName', message: field.message.replace(/^name\b/, 'organizationName') } : field)),
  );
}

function signUpFields(check: () => { name: string; email: string }): { name: string; email: string } {
  try {
    return check();
  } catch (error) {
    throw renamedFields(error);
  }
}

/** An integrator with a second factor signs in in two steps: the password, then the second factor. */
export function needsSecondFactorStep(user: ConsoleUser): boolean {
  return user.kind === 'integrator' && hasSecondFactor(user);
}

/** Reset mails being prepared after their answer; more are refused work for the request itself. */
const MAX_PENDING_RESETS = 100;

/** Sign-up, sign-in and the session's answer: the accounts' rules, called by the console's controllers. */
@Injectable()
export class ConsoleSessions implements BeforeApplicationShutdown {
  private readonly logger = new Logger('ConsoleSessions');
  private readonly pendingResets = new Set<Promise<void>>();

  constructor(
    @Inject(AccountStore) private readonly accounts: AccountStore,
    @Inject(AccountEvents) private readonly events: AccountEvents,
    @Inject(Sessions) private readonly sessions: Sessions,
    @Inject(LoginThrottle) private readonly throttle: LoginThrottle,
    @Inject(Outbox) private readonly outbox: Outbox,
    @Inject(Totp) private readonly totp: Totp,
    @Inject(ConsoleLinks) private readonly links: ConsoleLinks,
    @Inject(CommandBus) private readonly commands: CommandBus,
    @Inject(QueryBus) private readonly queries: QueryBus,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(ContactData) private readonly contacts: ContactData,
    @Inject(IdGenerator) private readonly ids: IdGenerator,
  ) {}

  /**
   * Deletes the signed-in user's own account once it re-authenticates (its password, or a current
   * code of its authenticator app; throttled as sign-in is). Refused to an organization's last
   * owner (and to the operators' last admin). Every session ends, the row goes with its links,
   * passkeys and backup codes, and the user's own key is destroyed, so its email sealed under it
   * opens nowhere any more (backups of the row included). Recorded as ConsoleAccountDeleted.
   */
  async deleteAccount(identity: ConsoleIdentity, input: { password?: string; code?: string }, request: FastifyRequest): Promise<void> {
    const { user } = identity;
    await this.throttle.assertMayTry(user.email, request.ip);
    if (!(await this.reauthenticated(user, input))) {
      await this.throttle.failed(user.email, request.ip);
      throw new InvalidCredentials('The password or authenticator code is wrong');
    }
    const now = this.clock.now();
    await this.events.record(commandContext(request, accountActor(user.kind, user.id)), async (db) => {
      // The team's rows locked: two owners deleting themselves at once cannot both pass.
      const { rows } = await db.query<{ id: string; role: string }>(
        user.kind === 'integrator'
          ? 'select id, role from console_users where organization_id = $1 order by id for update'
          : "select id, role from console_users where kind = 'operator' order by id for update",
        user.kind === 'integrator' ? [user.organizationId] : [],
      );
      const keeper = user.kind === 'integrator' ? 'owner' : 'admin';
      if (user.role === keeper && !rows.some((row) => row.role === keeper && row.id !== user.id)) {
        throw new LastOwner(
          user.kind === 'integrator'
            ? 'The last owner cannot delete the account: make another member owner first'
            : 'The last admin cannot delete the account: make another operator admin first',
        );
      }
      await this.sessions.revokeAll(user.id, now, null, db);
      await this.accounts.remove(user.id, db);
      await this.contacts.destroyUserKey(user.organizationId, user.id, now, db);
      return { value: undefined, events: [{ type: 'ConsoleAccountDeleted', data: { schemaVersion: 1, userId: user.id, organizationId: user.organizationId, role: user.role } }] };
    });
    await this.throttle.succeeded(user.email);
  }

  /** The password is the user's, or the code is a current one of its authenticator app (used up). */
  private async reauthenticated(user: ConsoleUser, input: { password?: string; code?: string }): Promise<boolean> {
    if (input.password !== undefined && input.password !== '') return user.passwordHash !== null && verifyPassword(user.passwordHash, input.password);
    if (input.code === undefined || input.code === '' || user.totpEnabledAt === null || user.totpSecret === null) return false;
    const step = await this.totp.check(user.id, user.totpSecret, input.code);
    return step !== null && (await this.accounts.acceptTotpStep(user.id, step));
  }

  /** The answer of GET /session and of every sign-in; anonymous callers get the double-submit cookie. */
  async view(request: FastifyRequest, reply: FastifyReply, identity: ConsoleIdentity | undefined): Promise<SessionView> {
    const devMailbox = this.outbox.devMailbox;
    if (identity === undefined) {
      let csrf = requestCookies(request)[CSRF_COOKIE];
      if (csrf === undefined || !/^[A-Za-z0-9_-]{43}$/.test(csrf)) {
        csrf = secretToken();
        this.sessions.setCsrfCookie(request, reply, csrf);
      }
      return { csrfToken: csrf, user: null, organization: null, expiresAt: null, devMailbox };
    }
    const { user, session } = identity;
    return {
      csrfToken: session.csrfToken,
      user: {
        id: user.id,
        email: user.email,
        kind: user.kind,
        role: user.role,
        emailVerified: user.emailVerifiedAt !== null,
        totpEnabled: user.totpEnabledAt !== null,
        secondFactor: hasSecondFactor(user),
        hasPasskey: user.hasPasskey,
        secondFactorPending: session.secondFactorPending,
        secondFactorEnrollmentRequired: user.kind === 'integrator' && user.organizationRequiresSecondFactor && !hasSecondFactor(user),
      },
      // Nothing of the organization before the second factor.
      organization: user.organizationId === null || session.secondFactorPending ? null : await this.organization(user.organizationId),
      expiresAt: this.sessions.endsAt(session).toISOString(),
      devMailbox,
    };
  }

  organization(organizationId: string): Promise<ConsoleOrganizationView> {
    return this.queries.execute(new GetConsoleOrganization(organizationId));
  }

  /** Ends one of the user's own sessions (sign-out, or a revocation from the sessions list); false when it was not live. */
  revokeSession(identity: ConsoleIdentity, sessionId: string, reason: 'signed_out' | 'revoked', request: FastifyRequest): Promise<boolean> {
    const { user } = identity;
    return this.events.record(commandContext(request, userActor(user)), async (db) => {
      const revoked = await this.sessions.revoke(user.id, sessionId, this.clock.now(), db);
      return { value: revoked, events: revoked ? [{ type: 'ConsoleSessionRevoked', data: { schemaVersion: 1, userId: user.id, sessionId, reason } }] : [] };
    });
  }

  /** A new session for `user`, its cookie set: the caller answers `view` of it. `secondFactorPending`: it waits for the second factor. */
  async signIn(user: ConsoleUser, request: FastifyRequest, reply: FastifyReply, secondFactorPending = false): Promise<ConsoleIdentity> {
    const { token, session } = await this.sessions.create(user, request, this.clock.now(), secondFactorPending);
    this.sessions.setSessionCookie(request, reply, token);
    return { user, session };
  }

  /**
   * A sign-up's work before its answer, the same whether or not the address has an account: the
   * fields checked (every refusal before anything depends on the address), the mails counted, the
   * password hashed, and the ids of the organization and owner it will make. The caller records it
   * (SignUps), which registers the organization through the admin API's own command, its owner and
   * a test key for the playground after the answer, or mails the address's holder instead of a
   * confirmation, so the sign-up form does not tell who has an account, by its answer or its time.
   */
  async signUp(input: { organizationName: string; email: string; password: string }, request: FastifyRequest): Promise<RecordedSignUp> {
    assertStrongPassword('password', input.password, [input.email, input.organizationName]);
    const fields = signUpFields(() => validRegistration({ name: input.organizationName.trim(), email: input.email.trim() }));
    await this.throttle.mailRequest(request.ip, { recipient: input.email });
    const passwordHash = await hashPassword(input.password);
    const userId = consoleId('usr');
    return {
      userId,
      organizationId: this.ids.organizationId(),
      organizationName: fields.name,
      email: input.email,
      passwordHash,
      context: commandContext(request, { type: 'user', id: userId }),
    };
  }

  /** To the holder of an account whose address someone signed up with: where to sign in or reset the password. */
  async mailAccountExists(user: ConsoleUser): Promise<void> {
    const signIn = this.links.plainPage(user.kind === 'operator' ? 'operator/login' : 'login');
    const reset = this.links.plainPage('forgot-password');
    await this.outbox.enqueue({
      to: user.email,
      subject: 'You already have an account',
      text: `Someone tried to sign up for the console with this email address, which has an account already. If it was you, sign in:\n\n${signIn}\n\nForgot your password? Ask for a reset link:\n\n${reset}\n\nIf it was not you, ignore this mail: nothing was changed.`,
      link: signIn,
    });
  }

  /** Another confirmation mail, counted per account, recipient and address. */
  async resendVerification(user: ConsoleUser, request: FastifyRequest): Promise<void> {
    await this.throttle.mailRequest(request.ip, { recipient: user.email, accountId: user.id });
    await this.sendVerification(user);
  }

  async sendVerification(user: ConsoleUser): Promise<void> {
    const { token } = await this.accounts.createToken({
      purpose: 'verify_email',
      userId: user.id,
      kind: user.kind,
      organizationId: user.organizationId,
      email: user.email,
      role: user.role,
      now: this.clock.now(),
      ttlMs: VERIFY_EMAIL_TTL_MS,
    });
    const link = this.links.page('verify-email', token);
    await this.outbox.enqueue({
      to: user.email,
      subject: 'Confirm your email address',
      text: `Confirm the email address of your console account:\n\n${link}\n\nThe link works once, for 3 days.`,
      link,
    });
  }

  /** Throttled per account and address; operators with a second factor also send its code. */
  async login(input: { email: string; password: string; totpCode?: string }, request: FastifyRequest): Promise<ConsoleUser> {
    await this.throttle.assertMayTry(input.email, request.ip);
    const user = await this.accounts.byEmail(input.email);
    const matches = await verifyPassword(user?.passwordHash ?? null, input.password);
    if (user === undefined || !matches) {
      await this.throttle.failed(input.email, request.ip);
      throw new InvalidCredentials('The email or the password is wrong');
    }
    if (user.kind === 'operator' && user.totpEnabledAt !== null && user.totpSecret !== null) {
      if (input.totpCode === undefined || input.totpCode === '') throw new TotpRefused('totp_required', 'Enter the code of your authenticator app');
      const step = await this.totp.check(user.id, user.totpSecret, input.totpCode);
      if (step === null || !(await this.accounts.acceptTotpStep(user.id, step))) {
        await this.throttle.failed(input.email, request.ip);
        throw new TotpRefused('totp_invalid', 'The authenticator code is wrong or was used already: wait for the next one');
      }
    }
    // An integrator's failures count on until the second factor is given too.
    if (!needsSecondFactorStep(user)) await this.throttle.succeeded(input.email);
    return user;
  }

  /** The actor is the account whose address the link confirms: whoever holds the link read its mail. */
  async verifyEmail(token: string, request: FastifyRequest): Promise<ConsoleUser> {
    const peeked = await this.accounts.peekToken(token, 'verify_email', this.clock.now());
    if (peeked === undefined || peeked.userId === null) throw new InvalidToken('The link is unknown, used or expired');
    return this.events.record(commandContext(request, accountActor(peeked.kind, peeked.userId)), async (db) => {
      const used = await this.accounts.consumeToken(token, 'verify_email', this.clock.now(), db);
      if (used === undefined || used.userId === null) throw new InvalidToken('The link is unknown, used or expired');
      await this.accounts.markEmailVerified(used.userId, this.clock.now(), db);
      const user = await this.accounts.byId(used.userId, db);
      if (user === undefined) throw new InvalidToken('The link is unknown, used or expired');
      return { value: user, events: [{ type: 'ConsoleEmailVerified', data: { schemaVersion: 1, userId: user.id } }] };
    });
  }

  /**
   * Always the same answer, whether the address has an account or not, and given before the
   * account is even looked up: the link and its mail are made afterwards, so the time of the
   * answer does not tell a known address from an unknown one.
   */
  async forgotPassword(email: string, request: FastifyRequest): Promise<void> {
    await this.throttle.mailRequest(request.ip, { recipient: email });
    if (this.pendingResets.size >= MAX_PENDING_RESETS) {
      // Bounded: under a flood the work is done in the request instead (the throttles bound the flood).
      await this.mailResetLink(email);
      return;
    }
    const pending = this.mailResetLink(email)
      .catch((error: unknown) => this.logger.error(`A reset mail could not be prepared: ${(error as Error).message ?? String(error)}`))
      .finally(() => this.pendingResets.delete(pending));
    this.pendingResets.add(pending);
  }

  private async mailResetLink(email: string): Promise<void> {
    const user = await this.accounts.byEmail(email);
    if (user === undefined) return;
    const { token, id } = await this.accounts.createToken({
      purpose: 'reset_password',
      userId: user.id,
      kind: user.kind,
      organizationId: user.organizationId,
      email: user.email,
      role: user.role,
      now: this.clock.now(),
      ttlMs: RESET_PASSWORD_TTL_MS,
    });
    // Only the newest link works: an older mail may sit in a mailbox someone else can read.
    await this.accounts.endTokens(user.id, 'reset_password', this.clock.now(), undefined, id);
    const link = this.links.page('reset-password', token);
    await this.outbox.enqueue({
      to: user.email,
      subject: 'Reset your password',
      text: `Someone asked to reset the password of your console account. If it was you:\n\n${link}\n\nThe link works once, for an hour. If it was not you, ignore this mail.`,
      link,
    });
  }

  /** The reset mails answered already are finished before the pool closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([...this.pendingResets]);
  }

  /** A new password; every session of the account ends. */
  async resetPassword(token: string, password: string, request: FastifyRequest): Promise<void> {
    const peeked = await this.accounts.peekToken(token, 'reset_password', this.clock.now());
    if (peeked === undefined || peeked.userId === null) throw new InvalidToken('The link is unknown, used or expired');
    assertStrongPassword('password', password, [peeked.email]);
    const passwordHash = await hashPassword(password);
    await this.events.record(commandContext(request, accountActor(peeked.kind, peeked.userId)), async (db) => {
      const used = await this.accounts.consumeToken(token, 'reset_password', this.clock.now(), db);
      if (used === undefined || used.userId === null) throw new InvalidToken('The link is unknown, used or expired');
      const before = await this.accounts.byId(used.userId, db);
      if (before === undefined) throw new InvalidToken('The link is unknown, used or expired');
      await this.accounts.setPassword(used.userId, passwordHash, db);
      await this.accounts.endTokens(used.userId, 'reset_password', this.clock.now(), db);
      // Whoever could read the mail could also sign in: the address is confirmed.
      await this.accounts.markEmailVerified(used.userId, this.clock.now(), db);
      await this.sessions.revokeAll(used.userId, this.clock.now(), null, db);
      const type = before.passwordHash === null ? 'ConsolePasswordSet' : 'ConsolePasswordReset';
      return { value: undefined, events: [{ type, data: { schemaVersion: 1, userId: used.userId } }] };
    });
  }

  async changePassword(identity: ConsoleIdentity, currentPassword: string, newPassword: string, request: FastifyRequest): Promise<void> {
    await this.throttle.assertMayTry(identity.user.email, request.ip);
    if (!(await verifyPassword(identity.user.passwordHash, currentPassword))) {
      await this.throttle.failed(identity.user.email, request.ip);
      throw new InvalidCredentials('The current password is wrong');
    }
    assertStrongPassword('newPassword', newPassword, [identity.user.email, currentPassword]);
    const passwordHash = await hashPassword(newPassword);
    const { user, session } = identity;
    await this.events.record(commandContext(request, userActor(user)), async (db) => {
      await this.accounts.setPassword(user.id, passwordHash, db);
      // A reset link mailed before the change would undo it.
      await this.accounts.endTokens(user.id, 'reset_password', this.clock.now(), db);
      await this.sessions.revokeAll(user.id, this.clock.now(), session.id, db);
      return { value: undefined, events: [{ type: 'ConsolePasswordChanged', data: { schemaVersion: 1, userId: user.id, keptSessionId: session.id } }] };
    });
  }

  async invitation(token: string): Promise<{ invitation: OneTimeToken; organizationName: string | null }> {
    const invitation = await this.accounts.peekToken(token, 'invitation', this.clock.now());
    if (invitation === undefined) throw new NotFound('No open invitation for this link');
    const organizationName = invitation.organizationId === null ? null : (await this.queries.execute(new GetOrganization(invitation.organizationId))).name;
    return { invitation, organizationName };
  }

  /** The invited account, its email confirmed by the link; the invitation stays open when the account cannot be made (email taken). */
  async acceptInvitation(token: string, password: string, request: FastifyRequest): Promise<ConsoleUser> {
    const peeked = await this.accounts.peekToken(token, 'invitation', this.clock.now());
    if (peeked === undefined) throw new InvalidToken('The invitation is unknown, used or expired');
    assertStrongPassword('password', password, [peeked.email]);
    const passwordHash = await hashPassword(password);
    const userId = consoleId('usr');
    return this.events.record(commandContext(request, accountActor(peeked.kind, userId)), async (db) => {
      const invitation = await this.accounts.consumeToken(token, 'invitation', this.clock.now(), db);
      if (invitation === undefined) throw new InvalidToken('The invitation is unknown, used or expired');
      const user = await this.accounts.insert(
        {
          id: userId,
          kind: invitation.kind,
          organizationId: invitation.organizationId,
          email: invitation.email,
          role: invitation.role,
          passwordHash,
          emailVerifiedAt: this.clock.now(),
          createdAt: this.clock.now(),
        },
        db,
      );
      return {
        value: user,
        events: [
          {
            type: 'ConsoleInvitationAccepted',
            data: { schemaVersion: 1, userId, invitationId: invitation.id, kind: invitation.kind, organizationId: invitation.organizationId, role: invitation.role },
          },
        ],
      };
    });
  }

  /**
   * The first operator account, with the admin token, while there is none. Later ones are invited
   * by an admin (or created with the CLI).
   */
  async bootstrapOperator(input: { adminToken: string; email: string; password: string }, request: FastifyRequest): Promise<ConsoleUser> {
    const adminToken = this.runtime.adminToken;
    if (adminToken === undefined) throw new NotFound('The admin token is not configured: create the first operator with the CLI');
    if (!sameToken(input.adminToken, adminToken)) throw new Unauthenticated('The admin token is not valid');
    assertStrongPassword('password', input.password, [input.email]);
    const passwordHash = await hashPassword(input.password);
    const lock = await this.pool.connect();
    try {
      await lock.query("select pg_advisory_lock(hashtextextended('console-first-operator', 7))");
      if ((await this.accounts.operatorCount()) > 0) throw new Forbidden('operators_exist', 'An operator account exists already: ask an admin for an invitation');
      const userId = consoleId('usr');
      // The admin token's holder, as on the admin API.
      return await this.events.record(commandContext(request, { type: 'operator', id: 'admin' }), async (db) => ({
        value: await this.accounts.insert(
          { id: userId, kind: 'operator', organizationId: null, email: input.email, role: 'admin', passwordHash, emailVerifiedAt: this.clock.now(), createdAt: this.clock.now() },
          db,
        ),
        events: [{ type: 'ConsoleOperatorCreated', data: { schemaVersion: 1, userId, role: 'admin', via: 'admin_token' } }],
      }));
    } finally {
      await lock.query("select pg_advisory_unlock(hashtextextended('console-first-operator', 7))").catch(() => undefined);
      lock.release();
    }
  }

  async startTotp(user: ConsoleUser): Promise<{ secret: string; otpauthUrl: string }> {
    if (user.totpEnabledAt !== null) throw new Forbidden('totp_enabled', 'The second factor is set up already');
    const { secret, otpauthUrl, wrapped, masterKeyId } = await this.totp.newSecret(user.id, user.email);
    await this.accounts.setTotpSecret(user.id, wrapped, masterKeyId);
    return { secret, otpauthUrl };
  }

  async confirmTotp(user: ConsoleUser, code: string, request: FastifyRequest): Promise<ConsoleUser> {
    const current = await this.accounts.byId(user.id);
    if (current === undefined || current.totpSecret === null) throw new Forbidden('totp_not_started', 'Start the set-up first (POST /console/api/operator/totp/setup)');
    if (current.totpEnabledAt !== null) return current;
    const step = await this.totp.check(current.id, current.totpSecret, code);
    if (step === null || !(await this.accounts.acceptTotpStep(current.id, step)))
      throw new TotpRefused('totp_invalid', 'The authenticator code is wrong or was used already: wait for the next one');
    await this.events.record(commandContext(request, userActor(current)), async (db) => {
      const enabled = await this.accounts.enableTotp(current.id, this.clock.now(), db);
      return { value: undefined, events: enabled ? [{ type: 'ConsoleTotpEnrolled', data: { schemaVersion: 1, userId: current.id } }] : [] };
    });
    const enabled = await this.accounts.byId(current.id);
    if (enabled === undefined) throw new NotFound('The account is gone');
    return enabled;
  }
}
