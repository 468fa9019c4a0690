import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Clock } from '../common/clock.js';
import { NotFound } from '../common/errors.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { validateBody } from '../common/validation.js';
import { ConsoleAccess, consoleIdentity, ConsoleGuard, type ConsoleRequest } from '../console-auth/console.guard.js';
import { Outbox, type MailboxEntry } from '../console-auth/outbox.js';
import { Sessions } from '../console-auth/sessions.js';
import { ConsoleSessions, needsSecondFactorStep, type SessionView } from './console-session.service.js';
import { SignUps } from './sign-ups.js';
import { BootstrapOperatorDto, ChangePasswordDto, DeleteAccountDto, EmailDto, LoginDto, ResetPasswordDto, SignUpDto, TokenDto, TotpCodeDto } from './console.dto.js';
import { ConsoleRoute, flag, jsonBody, list } from '../common/console-route.js';
import { ref } from '../common/openapi.js';

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6. */
const LOOPBACK = /^(?:127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;

/** The console's accounts: sign-up, sign-in, sessions, email verification, passwords, invitations, operators' second factor. */
@Controller('console/api')
@UseGuards(ConsoleGuard)
export class ConsoleAccountsController {
  constructor(
    @Inject(ConsoleSessions) private readonly console: ConsoleSessions,
    @Inject(Sessions) private readonly sessions: Sessions,
    @Inject(Outbox) private readonly outbox: Outbox,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(SignUps) private readonly signUps: SignUps,
  ) {}

  @Get('session')
  @ConsoleAccess({ who: 'anyone' })
  @ConsoleRoute('getSession', 'Session', 'The session: the user, the organization and the CSRF token (signed in or not)', { status: 200, data: ref('Session') })
  async session(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<SuccessEnvelope<SessionView>> {
    return ok(await this.console.view(request, reply, request.console));
  }

  /**
   * The same answer whether the address was new or had an account (which is mailed instead), and
   * no session: the new account signs in like any other, so no header tells the two apart.
   */
  @Post('signup')
  @HttpCode(202)
  @ConsoleAccess({ who: 'anyone' })
  @ConsoleRoute('signUp', 'Session', 'Sign up an organization and its owner (the address is mailed either way)', { status: 202, data: flag('sent') }, jsonBody(ref('SignUpInput')))
  async signUp(@Req() request: ConsoleRequest, @Body() body: unknown): Promise<SuccessEnvelope<{ sent: true }>> {
    // Recorded, then carried out after the answer: a new address and a taken one take the same time.
    await this.signUps.record(await this.console.signUp(validateBody(SignUpDto, body), request));
    return ok({ sent: true });
  }

  @Post('login')
  @HttpCode(200)
  @ConsoleAccess({ who: 'anyone' })
  @ConsoleRoute('signIn', 'Session', 'Sign in with email and password', { status: 200, data: ref('Session') }, jsonBody(ref('SignInInput')))
  async login(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    const input = validateBody(LoginDto, body);
    // A sign-up answered a moment ago may not be carried out yet: now, so that the new account can sign in.
    await this.signUps.settle(input.email);
    const user = await this.console.login(input, request);
    return ok(await this.console.view(request, reply, await this.console.signIn(user, request, reply, needsSecondFactorStep(user))));
  }

  @Post('operator/login')
  @HttpCode(200)
  @ConsoleAccess({ who: 'anyone' })
  @ConsoleRoute('signInOperator', 'Session', 'Sign in as an operator (password and TOTP)', { status: 200, data: ref('Session') }, jsonBody(ref('SignInInput')))
  async operatorLogin(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    return this.login(request, reply, body);
  }

  @Post('logout')
  @HttpCode(204)
  @ConsoleAccess({ who: 'anyone' })
  @ConsoleRoute('signOut', 'Session', 'Sign out', { status: 204 })
  async logout(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    if (request.console !== undefined) await this.console.revokeSession(request.console, request.console.session.id, 'signed_out', request);
    this.sessions.clearSessionCookie(request, reply);
  }

  @Post('email/verify')
  @HttpCode(200)
  @ConsoleAccess({ who: 'anyone' })
  @ConsoleRoute('verifyEmail', 'Session', 'Verify the email address with the mailed token', { status: 200, data: ref('Session') }, jsonBody(ref('TokenInput')))
  async verifyEmail(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    const user = await this.console.verifyEmail(validateBody(TokenDto, body).token, request);
    const identity = request.console?.user.id === user.id ? { ...request.console, user } : request.console;
    return ok(await this.console.view(request, reply, identity));
  }

  @Post('email/resend')
  @HttpCode(202)
  @ConsoleAccess({ who: 'signed_in' })
  @ConsoleRoute('resendVerification', 'Session', 'Mail the verification link again', { status: 202, data: flag('sent', { type: 'boolean' }) })
  async resend(@Req() request: ConsoleRequest): Promise<SuccessEnvelope<{ sent: boolean }>> {
    const { user } = consoleIdentity(request);
    if (user.emailVerifiedAt !== null) return ok({ sent: false });
    await this.console.resendVerification(user, request);
    return ok({ sent: true });
  }

  @Post('password/forgot')
  @HttpCode(202)
  @ConsoleAccess({ who: 'anyone' })
  @ConsoleRoute('forgotPassword', 'Session', 'Mail a password-reset link', { status: 202, data: flag('sent') }, jsonBody(ref('EmailInput')))
  async forgot(@Req() request: ConsoleRequest, @Body() body: unknown): Promise<SuccessEnvelope<{ sent: true }>> {
    await this.console.forgotPassword(validateBody(EmailDto, body).email, request);
    return ok({ sent: true });
  }

  @Post('password/reset')
  @HttpCode(200)
  @ConsoleAccess({ who: 'anyone' })
  @ConsoleRoute('resetPassword', 'Session', 'Set a new password with the mailed token', { status: 200, data: flag('reset') }, jsonBody(ref('TokenPasswordInput')))
  async reset(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<{ reset: true }>> {
    const input = validateBody(ResetPasswordDto, body);
    await this.console.resetPassword(input.token, input.password, request);
    this.sessions.clearSessionCookie(request, reply);
    return ok({ reset: true });
  }

  @Post('password/change')
  @HttpCode(200)
  @ConsoleAccess({ who: 'signed_in' })
  @ConsoleRoute('changePassword', 'Session', 'Change the password', { status: 200, data: flag('changed') }, jsonBody(ref('PasswordChangeInput')))
  async change(@Req() request: ConsoleRequest, @Body() body: unknown): Promise<SuccessEnvelope<{ changed: true }>> {
    const input = validateBody(ChangePasswordDto, body);
    await this.console.changePassword(consoleIdentity(request), input.currentPassword, input.newPassword, request);
    return ok({ changed: true });
  }

  /** Deletes the signed-in user's own account (re-authenticated by `password` or `code`); the session cookie goes with it. */
  @Post('account/delete')
  @HttpCode(204)
  @ConsoleAccess({ who: 'signed_in' })
  @ConsoleRoute(
    'deleteAccount',
    'Session',
    "Delete the signed-in user's own account, re-authenticated by password or authenticator code",
    { status: 204 },
    jsonBody(ref('DeleteAccountInput')),
  )
  async deleteAccount(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<void> {
    await this.console.deleteAccount(consoleIdentity(request), validateBody(DeleteAccountDto, body), request);
    this.sessions.clearSessionCookie(request, reply);
  }

  @Get('sessions')
  @ConsoleAccess({ who: 'signed_in' })
  @ConsoleRoute('listSessions', 'Session', "The user's open sessions", { status: 200, data: list(ref('SignInSession')) })
  async list(@Req() request: ConsoleRequest): Promise<SuccessEnvelope<unknown[]>> {
    const { user, session: current } = consoleIdentity(request);
    const sessions = await this.sessions.list(user.id, this.clock.now());
    return ok(
      sessions.map((session) => ({
        id: session.id,
        createdAt: session.createdAt.toISOString(),
        lastSeenAt: session.lastSeenAt.toISOString(),
        expiresAt: this.sessions.endsAt(session).toISOString(),
        userAgent: session.userAgent,
        address: session.address,
        current: session.id === current.id,
      })),
    );
  }

  @Delete('sessions/:id')
  @HttpCode(204)
  @ConsoleAccess({ who: 'signed_in' })
  @ConsoleRoute('revokeSession', 'Session', 'End one of the sessions', { status: 204 })
  async revoke(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('id') id: string): Promise<void> {
    const identity = consoleIdentity(request);
    if (!(await this.console.revokeSession(identity, id, 'revoked', request))) throw new NotFound('No such session of yours');
    if (id === identity.session.id) this.sessions.clearSessionCookie(request, reply);
  }

  /** The token in the query string, which request logs leave out (a path would be logged, and an open invitation is a credential). */
  @Get('invitation')
  @ConsoleAccess({ who: 'anyone' })
  @ConsoleRoute('getInvitation', 'Session', 'An open invitation, by its token', { status: 200, data: ref('Invitation') })
  async invitation(@Query('token') token: unknown): Promise<SuccessEnvelope<{ email: string; role: string; kind: string; organizationName: string | null }>> {
    if (typeof token !== 'string' || token.length > 100) throw new NotFound('No open invitation for this link');
    const { invitation, organizationName } = await this.console.invitation(token);
    return ok({ email: invitation.email, role: invitation.role, kind: invitation.kind, organizationName });
  }

  @Post('invitations/accept')
  @HttpCode(201)
  @ConsoleAccess({ who: 'anyone' })
  @ConsoleRoute('acceptInvitation', 'Session', 'Accept an invitation and sign in', { status: 201, data: ref('Session') }, jsonBody(ref('TokenPasswordInput')))
  async accept(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    const input = validateBody(ResetPasswordDto, body);
    const user = await this.console.acceptInvitation(input.token, input.password, request);
    return ok(await this.console.view(request, reply, await this.console.signIn(user, request, reply)));
  }

  /**
   * The development mailbox: only on the embedded default, where mail is not sent anywhere, and
   * only to this machine (it shows password-reset links; the embedded default listens on every
   * interface).
   */
  @Get('dev/mailbox')
  @ConsoleAccess({ who: 'anyone' })
  @ConsoleRoute('getDevMailbox', 'Session', 'The development mailbox (embedded default, this machine only)', { status: 200, data: list(ref('MailboxEntry')) })
  async mailbox(@Req() request: ConsoleRequest): Promise<SuccessEnvelope<MailboxEntry[]>> {
    if (!this.outbox.devMailbox || !LOOPBACK.test(request.ip)) throw new NotFound('Not found');
    return ok(await this.outbox.mailbox());
  }

  @Post('operator/bootstrap')
  @HttpCode(201)
  @ConsoleAccess({ who: 'anyone' })
  @ConsoleRoute('bootstrapOperator', 'Session', 'Create the first operator with the admin token', { status: 201, data: ref('Session') }, jsonBody(ref('BootstrapInput')))
  async bootstrap(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    const user = await this.console.bootstrapOperator(validateBody(BootstrapOperatorDto, body), request);
    return ok(await this.console.view(request, reply, await this.console.signIn(user, request, reply)));
  }

  @Post('operator/totp/setup')
  @HttpCode(200)
  @ConsoleAccess({ who: 'operator', beforeTotp: true })
  @ConsoleRoute('setUpOperatorTotp', 'Session', "Start an operator's TOTP set-up", { status: 200, data: ref('TotpSetup') })
  async totpSetup(@Req() request: ConsoleRequest): Promise<SuccessEnvelope<{ secret: string; otpauthUrl: string }>> {
    return ok(await this.console.startTotp(consoleIdentity(request).user));
  }

  @Post('operator/totp/confirm')
  @HttpCode(200)
  @ConsoleAccess({ who: 'operator', beforeTotp: true })
  @ConsoleRoute('confirmOperatorTotp', 'Session', "Confirm an operator's TOTP set-up", { status: 200, data: ref('Session') }, jsonBody(ref('TotpCodeInput')))
  async totpConfirm(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    const identity = consoleIdentity(request);
    const user = await this.console.confirmTotp(identity.user, validateBody(TotpCodeDto, body).code, request);
    return ok(await this.console.view(request, reply, { ...identity, user }));
  }
}
