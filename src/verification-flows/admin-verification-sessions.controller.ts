import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AdminGuard, operatorActor, type AdminRequest } from '../common/admin.guard.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { ADMIN_ERRORS, ADMIN_WRITE_ERRORS, ANY_ROUTE_ERRORS, ApiErrors, ApiJsonBody, ApiPaging, ApiPathParam, ApiRoute, ApiSuccess, BODY_ERRORS, ref } from '../common/openapi.js';
import { paging } from '../common/paging.js';
import { commandContext } from '../common/request-context.js';
import { SESSION_ID_SCHEMA } from './verification-flows.openapi.js';
import { VerificationSessions, type ReviewQueueItem, type SessionReview, type SessionView } from './verification-sessions.service.js';

const SESSION_PATH = ApiPathParam('id', SESSION_ID_SCHEMA, 'the session');

/** Operators deciding sessions in review, for any organization: the same service as the consoles. */
@ApiBearerAuth('adminToken')
@Controller('admin/v1/verification_sessions')
@UseGuards(AdminGuard)
export class AdminVerificationSessionsController {
  constructor(@Inject(VerificationSessions) private readonly sessions: VerificationSessions) {}

  @Get('in_review')
  @ApiRoute('adminListSessionsInReview', 'Admin: verification sessions', 'Sessions in review', "Every organization's sessions waiting for a person's decision, oldest first.")
  @ApiPaging()
  @ApiSuccess(200, 'A page of sessions in review', { type: 'array', items: ref('VerificationSessionInReview') }, ref('PagingMeta'))
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async inReview(@Query() query: Record<string, unknown>): Promise<SuccessEnvelope<ReviewQueueItem[]>> {
    const { page, pageSize } = paging(query ?? {});
    const { total, sessions } = await this.sessions.inReview(page, pageSize);
    return ok(sessions, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }

  @Get(':id/review')
  @ApiRoute(
    'adminGetSessionReview',
    'Admin: verification sessions',
    "A session's evidence for review",
    "The session, its history, the identity record's portrait link, whether a selfie can be shown.",
  )
  @SESSION_PATH
  @ApiSuccess(200, 'The session for review', ref('VerificationSessionReview'))
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async review(@Param('id') id: string): Promise<SuccessEnvelope<SessionReview>> {
    return ok(await this.sessions.review(await this.sessions.ownerOfSession(id), id));
  }

  @Get(':id/selfie')
  @ApiRoute(
    'adminGetSessionSelfie',
    'Admin: verification sessions',
    "A session's selfie",
    'Opened from the sealed store for the reviewer; `Cache-Control: no-store`. 404 once erased.',
  )
  @SESSION_PATH
  @ApiResponse({ status: 200, description: 'The image', content: { 'image/jpeg': { schema: { type: 'string', contentMediaType: 'image/jpeg' } as never } } })
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async selfie(@Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    const selfie = await this.sessions.reviewSelfie(await this.sessions.ownerOfSession(id), id);
    await reply.status(200).header('content-type', selfie.contentType).header('cache-control', 'no-store').send(selfie.bytes);
  }

  @Post(':id/review')
  @HttpCode(200)
  @ApiRoute(
    'adminDecideSessionReview',
    'Admin: verification sessions',
    'Approve or decline a session in review',
    "With a reason of the decision's fixed list. Only a session in review (409 `session_not_in_review`), not once erased (403 `personal_data_destroyed`). Fires `verification_session.approved` or `.declined`.",
  )
  @SESSION_PATH
  @ApiJsonBody(ref('VerificationSessionReviewInput'), { approve: { summary: 'The faces match', value: { decision: 'approved', reason: 'faces_match' } } })
  @ApiSuccess(200, 'The session, decided', ref('VerificationSession'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, ADMIN_WRITE_ERRORS, 'session_not_in_review', 'personal_data_destroyed')
  async decide(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    const owner = await this.sessions.ownerOfSession(id);
    return ok(await this.sessions.decideReview(owner, id, body, 'operator', commandContext(request, operatorActor(request))));
  }
}
