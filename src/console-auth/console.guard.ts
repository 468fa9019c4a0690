import { type CanActivate, type ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Clock } from '../common/clock.js';
import { Forbidden, InvariantViolated, Unauthenticated } from '../common/errors.js';
import type { Actor } from '../common/event.js';
import { AccountStore, hasSecondFactor, type ConsoleUser, type IntegratorRole } from './accounts.js';
import { CSRF_COOKIE, requestCookies, SESSION_COOKIE, Sessions, type SessionRecord } from './sessions.js';
import { sameToken } from './tokens.js';

export const CSRF_HEADER = 'x-csrf-token';

/** Who may call a console route. Every route of a console controller must say (the guard refuses one that does not). */
export type ConsoleAccessRule =
  | { readonly who: 'anyone' }
  | { readonly who: 'signed_in' }
  /** An integrator whose session waits for its second factor (after the password): the second factor's step. */
  | { readonly who: 'second_factor_step' }
  /** `beforeSecondFactor`: open while the organization requires a second factor the user has not set up (its enrolment). */
  | { readonly who: 'integrator'; readonly roles: readonly IntegratorRole[]; readonly beforeSecondFactor?: boolean }
  /** `write`: auditors are refused (403 read_only). `beforeTotp`: open to an operator who has not enrolled TOTP yet. */
  | { readonly who: 'operator'; readonly write?: boolean; readonly beforeTotp?: boolean };

const ACCESS = 'console:access';
export const ConsoleAccess = (rule: ConsoleAccessRule): MethodDecorator & ClassDecorator => SetMetadata(ACCESS, rule);
export const ALL_INTEGRATOR_ROLES: readonly IntegratorRole[] = ['owner', 'developer', 'finance'];

export interface ConsoleIdentity {
  readonly session: SessionRecord;
  readonly user: ConsoleUser;
}

export interface ConsoleRequest extends FastifyRequest {
  console?: ConsoleIdentity;
  /** The CSRF token this request's answer should carry for an anonymous caller. */
  consoleCsrf?: string;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The console's one guard: resolves the session cookie, checks the CSRF token of every
 * state-changing request (the session's token, or before sign-in the double-submit cookie), then
 * the route's rule: signed in, the kind of account, the role, the operator's second factor.
 */
@Injectable()
export class ConsoleGuard implements CanActivate {
  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(Sessions) private readonly sessions: Sessions,
    @Inject(AccountStore) private readonly accounts: AccountStore,
    @Inject(Clock) private readonly clock: Clock,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = this.reflector.getAllAndOverride<ConsoleAccessRule | undefined>(ACCESS, [context.getHandler(), context.getClass()]);
    if (rule === undefined) throw new InvariantViolated('a console route without an access rule');
    const request = context.switchToHttp().getRequest<ConsoleRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const cookies = requestCookies(request);
    const identity = await this.identify(cookies[SESSION_COOKIE]);
    if (identity === undefined && cookies[SESSION_COOKIE] !== undefined && cookies[SESSION_COOKIE] !== '') this.sessions.clearSessionCookie(request, reply);
    if (identity !== undefined) request.console = identity;

    if (!SAFE_METHODS.has(request.method)) this.checkCsrf(request, identity?.session.csrfToken ?? cookies[CSRF_COOKIE]);

    switch (rule.who) {
      case 'anyone':
        return true;
      case 'signed_in':
        this.signedIn(identity);
        return true;
      case 'second_factor_step': {
        if (identity === undefined) throw new Unauthenticated('Sign in to the console (the session is missing, has expired or was revoked)');
        if (identity.user.kind !== 'integrator') throw new Forbidden('wrong_console', "This is the integrators' console; operators use /console/operator");
        if (!identity.session.secondFactorPending) throw new Forbidden('second_factor_not_pending', 'This session is not waiting for a second factor');
        return true;
      }
      case 'integrator': {
        const { user } = this.signedIn(identity, rule.beforeSecondFactor === true);
        if (user.kind !== 'integrator') throw new Forbidden('wrong_console', "This is the integrators' console; operators use /console/operator");
        if (!(rule.roles as readonly string[]).includes(user.role)) {
          throw new Forbidden('forbidden_role', `The ${user.role} role may not do this`, { requiredRoles: [...rule.roles] });
        }
        return true;
      }
      case 'operator': {
        const { user } = this.signedIn(identity);
        if (user.kind !== 'operator') throw new Forbidden('wrong_console', "This is the operators' console");
        if (rule.beforeTotp !== true && user.totpEnabledAt === null) throw new Forbidden('totp_enrollment_required', 'Set up the second factor (TOTP) first');
        if (rule.write === true && user.role === 'auditor') throw new Forbidden('read_only', 'Auditors read everything and change nothing');
        return true;
      }
      default: {
        const _exhaustive: never = rule;
        throw new InvariantViolated(`unknown console access rule ${JSON.stringify(_exhaustive)}`);
      }
    }
  }

  private async identify(token: string | undefined): Promise<ConsoleIdentity | undefined> {
    if (token === undefined || token === '' || token.length > 100) return undefined;
    const session = await this.sessions.resolve(token, this.clock.now());
    if (session === undefined) return undefined;
    const user = await this.accounts.byId(session.userId);
    return user === undefined ? undefined : { session, user };
  }

  /**
   * A session past its second factor. An integrator whose organization requires one and who has
   * none reaches only the routes that set one up (`beforeSecondFactor`).
   */
  private signedIn(identity: ConsoleIdentity | undefined, beforeSecondFactor = false): ConsoleIdentity {
    if (identity === undefined) throw new Unauthenticated('Sign in to the console (the session is missing, has expired or was revoked)');
    if (identity.session.secondFactorPending)
      throw new Forbidden('second_factor_required', 'Give your second factor (an authenticator code, a backup code or a passkey) to finish signing in');
    const { user } = identity;
    if (!beforeSecondFactor && user.kind === 'integrator' && user.organizationRequiresSecondFactor && !hasSecondFactor(user)) {
      throw new Forbidden('second_factor_enrollment_required', 'Your organization requires a second factor: set up an authenticator app or a passkey first');
    }
    return identity;
  }

  /** The token must be sent back in X-CSRF-Token; a cross-site Origin is refused outright. */
  private checkCsrf(request: FastifyRequest, expected: string | undefined): void {
    const origin = request.headers.origin;
    if (typeof origin === 'string' && origin !== 'null') {
      let host: string | undefined;
      try {
        host = new URL(origin).host;
      } catch {
        host = undefined;
      }
      if (host !== request.headers.host) throw new Forbidden('csrf_failed', 'A console request from another site is refused');
    }
    const given = request.headers[CSRF_HEADER];
    if (typeof given !== 'string' || expected === undefined || expected === '' || given.length > 100 || !sameToken(given, expected)) {
      throw new Forbidden('csrf_failed', 'The X-CSRF-Token header is missing or does not match: read it again from GET /console/api/session');
    }
  }
}

/** The signed-in user of a route the guard let through. */
export function consoleIdentity(request: ConsoleRequest): ConsoleIdentity {
  if (request.console === undefined) throw new InvariantViolated('ConsoleGuard did not sign this request in');
  return request.console;
}

/** The actor of the events a console user causes. */
export function userActor(user: ConsoleUser): Actor {
  return user.kind === 'operator' ? { type: 'operator', id: `user:${user.id}` } : { type: 'user', id: user.id };
}

/** The organization of an integrator's user. */
export function organizationOf(user: ConsoleUser): string {
  if (user.organizationId === null) throw new InvariantViolated('an integrator user without an organization');
  return user.organizationId;
}
