import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { VerificationSessions, type Presentation } from './verification-sessions.service.js';

/**
 * What the hosted page (and, later, the embedded widget) calls: one session, authorised by its
 * client secret alone (`Authorization: Bearer vcs_…`), never by an API key. Each call is refused
 * once the session expired, was cancelled, submitted or decided, and is rate-limited per session;
 * the checks it runs also count against the session key's own limit.
 */
@ApiExcludeController()
@Controller('verify/api/sessions')
export class HostedSessionController {
  constructor(@Inject(VerificationSessions) private readonly sessions: VerificationSessions) {}

  @Get(':id')
  async presentation(@Param('id') id: string, @Headers('authorization') authorization: string | undefined): Promise<SuccessEnvelope<Presentation>> {
    return ok(await this.sessions.presentation(await this.open(id, authorization)));
  }

  @Post(':id/consent')
  @HttpCode(200)
  async consent(@Param('id') id: string, @Headers('authorization') authorization: string | undefined, @Body() body: unknown): Promise<SuccessEnvelope<{ status: string }>> {
    return ok(await this.sessions.consent(await this.open(id, authorization), body));
  }

  @Post(':id/identity')
  @HttpCode(200)
  async identity(
    @Param('id') id: string,
    @Headers('authorization') authorization: string | undefined,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SuccessEnvelope<{ status: string; checked: true }>> {
    return ok(await this.sessions.identity(await this.open(id, authorization), body, reply));
  }

  @Post(':id/selfie')
  @HttpCode(200)
  async selfie(
    @Param('id') id: string,
    @Headers('authorization') authorization: string | undefined,
    @Body() body: unknown,
  ): Promise<SuccessEnvelope<{ status: string; accepted: true; liveness: string | null }>> {
    return ok(await this.sessions.selfie(await this.open(id, authorization), body));
  }

  @Post(':id/documents')
  @HttpCode(200)
  async document(
    @Param('id') id: string,
    @Headers('authorization') authorization: string | undefined,
    @Body() body: unknown,
  ): Promise<SuccessEnvelope<{ status: string; accepted: true }>> {
    return ok(await this.sessions.document(await this.open(id, authorization), body));
  }

  @Post(':id/submit')
  @HttpCode(200)
  async submit(
    @Param('id') id: string,
    @Headers('authorization') authorization: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<SuccessEnvelope<{ status: 'submitted'; redirectUrl: string | null }>> {
    return ok(await this.sessions.submit(await this.open(id, authorization), reply));
  }

  /** The session the secret opens, only while the browser may act on it. */
  private async open(id: string, authorization: string | undefined) {
    const folded = await this.sessions.authorise(id, authorization);
    this.sessions.assertOpen(folded);
    return folded;
  }
}
