import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiKeyGuard } from '../auth/api-key.guard.js';
import { ConsoleRoute, jsonBody, list } from '../common/console-route.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { isEnvironment, type Environment } from '../common/environment.js';
import { ValidationFailed } from '../common/errors.js';
import { ref } from '../common/openapi.js';
import { paging } from '../common/paging.js';
import { commandContext } from '../common/request-context.js';
import { isPlainObject } from '../common/validation.js';
import { ConsoleAccess, consoleIdentity, ConsoleGuard, organizationOf, userActor, type ConsoleRequest } from '../console-auth/console.guard.js';
import type { FlowOwner } from './verification-flow.decider.js';
import { VerificationFlows, type FlowView } from './verification-flows.service.js';
import { VerificationSessions, type ReviewQueueItem, type SessionReview, type SessionView } from './verification-sessions.service.js';

/** Who builds flows and reads sessions: those who hold the keys. */
const DEVELOPERS = ['owner', 'developer'] as const;
/** Who decides a session in review for the organization: its owners. */
const OWNERS = ['owner'] as const;

interface LinkView {
  readonly id: string;
  readonly flowId: string;
  readonly url: string;
  readonly createdAt: string;
}

function environmentOf(query: Record<string, unknown> | undefined): Environment {
  const value = query?.environment ?? 'test';
  if (!isEnvironment(value)) throw new ValidationFailed([{ field: 'environment', message: 'environment must be "test" or "live"' }]);
  return value;
}

async function sendSelfie(reply: FastifyReply, selfie: { contentType: string; bytes: Buffer }): Promise<void> {
  await reply.status(200).header('content-type', selfie.contentType).header('cache-control', 'no-store').send(selfie.bytes);
}

/**
 * The flows and sessions pages, for the user's organization and the page's `?environment=`: the
 * same services as /v1/verification_flows and /v1/verification_sessions (their parsing, sealing
 * and rules), with the user as actor; and the review of a session in needs_review by the owner.
 */
@Controller('console/api')
@UseGuards(ConsoleGuard)
export class ConsoleVerificationFlowsController {
  constructor(
    @Inject(VerificationFlows) private readonly flows: VerificationFlows,
    @Inject(VerificationSessions) private readonly sessions: VerificationSessions,
    @Inject(ApiKeyGuard) private readonly keys: ApiKeyGuard,
  ) {}

  @Get('verification_flows')
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('listFlows', 'Verification flows', "The environment's flows, newest first", { status: 200, data: list(ref('VerificationFlow')), meta: ref('PagingMeta') })
  async list(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<FlowView[]>> {
    const { environment: _environment, ...rest } = query ?? {};
    const { page, pageSize } = paging(rest);
    const { total, flows } = await this.flows.list(this.owner(request, query), page, pageSize);
    return ok(flows, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }

  @Post('verification_flows')
  @HttpCode(201)
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('createFlow', 'Verification flows', 'Create a flow (version 1)', { status: 201, data: ref('VerificationFlow') }, jsonBody(ref('VerificationFlowInput')))
  async create(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>, @Body() body: unknown): Promise<SuccessEnvelope<FlowView>> {
    return ok(await this.flows.create(this.owner(request, query), body, this.context(request)));
  }

  @Get('verification_flows/:id')
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('getFlow', 'Verification flows', 'A flow at its newest version', { status: 200, data: ref('VerificationFlow') })
  async get(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>, @Param('id') id: string): Promise<SuccessEnvelope<FlowView>> {
    return ok(await this.flows.get(this.owner(request, query), id));
  }

  @Post('verification_flows/:id/versions')
  @HttpCode(201)
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('publishFlowVersion', 'Verification flows', "Publish a flow's next version", { status: 201, data: ref('VerificationFlow') }, jsonBody(ref('VerificationFlowInput')))
  async publish(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<FlowView>> {
    return ok(await this.flows.publish(this.owner(request, query), id, body, this.context(request)));
  }

  @Get('verification_flows/:id/links')
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('listFlowLinks', 'Verification flows', "A flow's reusable links, newest first", { status: 200, data: list(ref('VerificationFlowLink')) })
  async links(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>, @Param('id') id: string): Promise<SuccessEnvelope<LinkView[]>> {
    const links = await this.flows.links(this.owner(request, query), id);
    return ok(links.map((link) => ({ ...link, url: this.sessions.publicUrl(`/verify/start/${link.id}`) })));
  }

  /** A link's sessions run their checks on a key, as the API's link on the key that made it: the one the user picks, or the environment's newest active key. */
  @Post('verification_flows/:id/links')
  @HttpCode(201)
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute(
    'createFlowLink',
    'Verification flows',
    'Create a reusable link on one of your keys',
    { status: 201, data: ref('VerificationFlowLink') },
    jsonBody(ref('FlowLinkInput'), false),
  )
  async createLink(
    @Req() request: ConsoleRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Query() query: Record<string, unknown>,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<SuccessEnvelope<LinkView>> {
    const owner = this.owner(request, query);
    const keyId = isPlainObject(body) ? body.keyId : undefined;
    if (keyId !== undefined && keyId !== null && (typeof keyId !== 'string' || keyId.length > 40))
      throw new ValidationFailed([{ field: 'keyId', message: 'keyId must be the id of one of your keys' }]);
    const key = await this.keys.admitOwnKey(owner.organizationId, owner.environment, (keyId as string | undefined) ?? null, reply);
    if (key === undefined) throw new ValidationFailed([{ field: 'keyId', message: `No active ${owner.environment} key: create one on the API keys page first` }]);
    const link = await this.flows.createLink(owner, id, key.keyId, this.context(request));
    return ok({ ...link, url: this.sessions.publicUrl(`/verify/start/${link.id}`) });
  }

  @Get('verification_sessions')
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('listVerificationSessions', 'Verification flows', "The environment's sessions, newest first; status and flowId filter", {
    status: 200,
    data: list(ref('VerificationSession')),
    meta: ref('PagingMeta'),
  })
  async listSessions(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<SessionView[]>> {
    const { environment: _environment, page: pageNumber, pageSize, ...filters } = query ?? {};
    const { page, pageSize: size } = paging({ page: pageNumber, pageSize });
    const { total, sessions } = await this.sessions.list(this.owner(request, query), filters, page, size);
    return ok(sessions, { total, page, pageSize: size, totalPages: Math.ceil(total / size) });
  }

  @Get('verification_sessions/:id')
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('getSessionReview', 'Verification flows', 'A session: its history, decision, checks and the evidence a review needs', {
    status: 200,
    data: ref('VerificationSessionReview'),
  })
  async session(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>, @Param('id') id: string): Promise<SuccessEnvelope<SessionReview>> {
    return ok(await this.sessions.review(this.owner(request, query), id));
  }

  @Get('verification_sessions/:id/selfie')
  @ConsoleAccess({ who: 'integrator', roles: OWNERS })
  @ConsoleRoute('getSessionSelfie', 'Verification flows', "A session's selfie, for its review (no-store)", { status: 200, file: 'image/jpeg' })
  async selfie(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    await sendSelfie(reply, await this.sessions.reviewSelfie(this.owner(request, query), id));
  }

  @Post('verification_sessions/:id/review')
  @HttpCode(200)
  @ConsoleAccess({ who: 'integrator', roles: OWNERS })
  @ConsoleRoute(
    'decideSessionReview',
    'Verification flows',
    'Approve or decline a session in review, with a reason of the fixed list',
    { status: 200, data: ref('VerificationSession') },
    jsonBody(ref('VerificationSessionReviewInput')),
  )
  async decide(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    return ok(await this.sessions.decideReview(this.owner(request, query), id, body, 'organization', this.context(request)));
  }

  // The operators' console: sessions in review of every organization.

  @Get('operator/verification_sessions/in_review')
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('operatorListSessionsInReview', 'Operator', "Every organization's sessions in review, oldest first", {
    status: 200,
    data: list(ref('VerificationSessionInReview')),
    meta: ref('PagingMeta'),
  })
  async inReview(@Query() query: Record<string, unknown>): Promise<SuccessEnvelope<ReviewQueueItem[]>> {
    const { page, pageSize } = paging(query ?? {});
    const { total, sessions } = await this.sessions.inReview(page, pageSize);
    return ok(sessions, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }

  @Get('operator/verification_sessions/:id')
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('operatorGetSessionReview', 'Operator', 'A session for review, of any organization (without its customer id or metadata)', {
    status: 200,
    data: ref('VerificationSessionReview'),
  })
  async operatorSession(@Param('id') id: string): Promise<SuccessEnvelope<SessionReview>> {
    const review = await this.sessions.review(await this.sessions.ownerOfSession(id), id);
    // The integrator's own id for the person and its metadata are not the operator's to read.
    return ok({ ...review, session: { ...review.session, customerId: null, metadata: null } });
  }

  @Get('operator/verification_sessions/:id/selfie')
  @ConsoleAccess({ who: 'operator' })
  @ConsoleRoute('operatorGetSessionSelfie', 'Operator', "A session's selfie, for its review (no-store)", { status: 200, file: 'image/jpeg' })
  async operatorSelfie(@Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    await sendSelfie(reply, await this.sessions.reviewSelfie(await this.sessions.ownerOfSession(id), id));
  }

  @Post('operator/verification_sessions/:id/review')
  @HttpCode(200)
  @ConsoleAccess({ who: 'operator', write: true })
  @ConsoleRoute(
    'operatorDecideSessionReview',
    'Operator',
    'Approve or decline a session in review, with a reason of the fixed list',
    { status: 200, data: ref('VerificationSession') },
    jsonBody(ref('VerificationSessionReviewInput')),
  )
  async operatorDecide(@Req() request: ConsoleRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<SessionView>> {
    const owner = await this.sessions.ownerOfSession(id);
    const view = await this.sessions.decideReview(owner, id, body, 'operator', this.context(request));
    return ok({ ...view, customerId: null, metadata: null });
  }

  private context(request: ConsoleRequest) {
    return commandContext(request, userActor(consoleIdentity(request).user));
  }

  private owner(request: ConsoleRequest, query: Record<string, unknown> | undefined): FlowOwner {
    return { organizationId: organizationOf(consoleIdentity(request).user), environment: environmentOf(query) };
  }
}
