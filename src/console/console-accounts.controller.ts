import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Clock } from '../common/clock.js';
import { NotFound } from '../common/errors.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { validateBody } from '../common/validation.js';
import { ConsoleAccess, consoleIdentity, ConsoleGuard, type ConsoleRequest } from '../console-auth/console.guard.js';
import { Outbox, type MailboxEntry } from '../console-auth/outbox.js';
import { Sessions } from '../console-auth/sessions.js';
import { ConsoleSessions, type SessionView } from './console-session.service.js';
import { BootstrapOperatorDto, ChangePasswordDto, EmailDto, LoginDto, ResetPasswordDto, SignUpDto, TokenDto, TotpCodeDto } from './console.dto.js';

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6. */
const LOOPBACK = /^(?:127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;

/** The console's accounts: sign-up, sign-in, sessions, email verification, passwords, invitations, operators' second factor. */
@ApiExcludeController()
@Controller('console/api')
@UseGuards(ConsoleGuard)
export class ConsoleAccountsController {
  constructor(
    @Inject(ConsoleSessions) private readonly console: ConsoleSessions,
    @Inject(Sessions) private readonly sessions: Sessions,
    @Inject(Outbox) private readonly outbox: Outbox,
    @Inject(Clock) private readonly clock: Clock,
  ) {}

  @Get('session')
  @ConsoleAccess({ who: 'anyone' })
  async session(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<SuccessEnvelope<SessionView>> {
    return ok(await this.console.view(request, reply, request.console));
  }

  @Post('signup')
  @HttpCode(201)
  @ConsoleAccess({ who: 'anyone' })
  async signUp(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    const input = validateBody(SignUpDto, body);
    const user = await this.console.signUp(input, request);
    return ok(await this.console.view(request, reply, await this.console.signIn(user, request, reply)));
  }

  @Post('login')
  @HttpCode(200)
  @ConsoleAccess({ who: 'anyone' })
  async login(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    const user = await this.console.login(validateBody(LoginDto, body), request);
    return ok(await this.console.view(request, reply, await this.console.signIn(user, request, reply)));
  }

  @Post('operator/login')
  @HttpCode(200)
  @ConsoleAccess({ who: 'anyone' })
  async operatorLogin(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    return this.login(request, reply, body);
  }

  @Post('logout')
  @HttpCode(204)
  @ConsoleAccess({ who: 'anyone' })
  async logout(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    if (request.console !== undefined) await this.console.revokeSession(request.console, request.console.session.id, 'signed_out', request);
    this.sessions.clearSessionCookie(request, reply);
  }

  @Post('email/verify')
  @HttpCode(200)
  @ConsoleAccess({ who: 'anyone' })
  async verifyEmail(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    const user = await this.console.verifyEmail(validateBody(TokenDto, body).token, request);
    const identity = request.console?.user.id === user.id ? { ...request.console, user } : request.console;
    return ok(await this.console.view(request, reply, identity));
  }

  @Post('email/resend')
  @HttpCode(202)
  @ConsoleAccess({ who: 'signed_in' })
  async resend(@Req() request: ConsoleRequest): Promise<SuccessEnvelope<{ sent: boolean }>> {
    const { user } = consoleIdentity(request);
    if (user.emailVerifiedAt !== null) return ok({ sent: false });
    await this.console.resendVerification(user, request);
    return ok({ sent: true });
  }

  @Post('password/forgot')
  @HttpCode(202)
  @ConsoleAccess({ who: 'anyone' })
  async forgot(@Req() request: ConsoleRequest, @Body() body: unknown): Promise<SuccessEnvelope<{ sent: true }>> {
    await this.console.forgotPassword(validateBody(EmailDto, body).email, request);
    return ok({ sent: true });
  }

  @Post('password/reset')
  @HttpCode(200)
  @ConsoleAccess({ who: 'anyone' })
  async reset(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<{ reset: true }>> {
    const input = validateBody(ResetPasswordDto, body);
    await this.console.resetPassword(input.token, input.password, request);
    this.sessions.clearSessionCookie(request, reply);
    return ok({ reset: true });
  }

  @Post('password/change')
  @HttpCode(200)
  @ConsoleAccess({ who: 'signed_in' })
  async change(@Req() request: ConsoleRequest, @Body() body: unknown): Promise<SuccessEnvelope<{ changed: true }>> {
    const input = validateBody(ChangePasswordDto, body);
    await this.console.changePassword(consoleIdentity(request), input.currentPassword, input.newPassword, request);
    return ok({ changed: true });
  }

  @Get('sessions')
  @ConsoleAccess({ who: 'signed_in' })
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
  async revoke(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Param('id') id: string): Promise<void> {
    const identity = consoleIdentity(request);
    if (!(await this.console.revokeSession(identity, id, 'revoked', request))) throw new NotFound('No such session of yours');
    if (id === identity.session.id) this.sessions.clearSessionCookie(request, reply);
  }

  /** The token in the query string, which request logs leave out (a path would be logged, and an open invitation is a credential). */
  @Get('invitation')
  @ConsoleAccess({ who: 'anyone' })
  async invitation(@Query('token') token: unknown): Promise<SuccessEnvelope<{ email: string; role: string; kind: string; organizationName: string | null }>> {
    if (typeof token !== 'string' || token.length > 100) throw new NotFound('No open invitation for this link');
    const { invitation, organizationName } = await this.console.invitation(token);
    return ok({ email: invitation.email, role: invitation.role, kind: invitation.kind, organizationName });
  }

  @Post('invitations/accept')
  @HttpCode(201)
  @ConsoleAccess({ who: 'anyone' })
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
  async mailbox(@Req() request: ConsoleRequest): Promise<SuccessEnvelope<MailboxEntry[]>> {
    if (!this.outbox.devMailbox || !LOOPBACK.test(request.ip)) throw new NotFound('Not found');
    return ok(await this.outbox.mailbox());
  }

  @Post('operator/bootstrap')
  @HttpCode(201)
  @ConsoleAccess({ who: 'anyone' })
  async bootstrap(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    const user = await this.console.bootstrapOperator(validateBody(BootstrapOperatorDto, body), request);
    return ok(await this.console.view(request, reply, await this.console.signIn(user, request, reply)));
  }

  @Post('operator/totp/setup')
  @HttpCode(200)
  @ConsoleAccess({ who: 'operator', beforeTotp: true })
  async totpSetup(@Req() request: ConsoleRequest): Promise<SuccessEnvelope<{ secret: string; otpauthUrl: string }>> {
    return ok(await this.console.startTotp(consoleIdentity(request).user));
  }

  @Post('operator/totp/confirm')
  @HttpCode(200)
  @ConsoleAccess({ who: 'operator', beforeTotp: true })
  async totpConfirm(@Req() request: ConsoleRequest, @Res({ passthrough: true }) reply: FastifyReply, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    const identity = consoleIdentity(request);
    const user = await this.console.confirmTotp(identity.user, validateBody(TotpCodeDto, body).code, request);
    return ok(await this.console.view(request, reply, { ...identity, user }));
  }
}
