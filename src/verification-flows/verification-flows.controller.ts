import { MAX_FLOW_LINKS } from './verification-flow.decider.js';
import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, UseGuards } from '@nestjs/common';
import { ApiQuery, ApiSecurity } from '@nestjs/swagger';
import { AnyOrganizationStatus, ApiKeyGuard, authenticatedKey, keyActor, type KeyedRequest } from '../auth/api-key.guard.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { ANY_ROUTE_ERRORS, ApiErrors, ApiJsonBody, ApiPaging, ApiPathParam, ApiRoute, ApiSuccess, BODY_ERRORS, KEY_ERRORS, ref } from '../common/openapi.js';
import { paging } from '../common/paging.js';
import { commandContext } from '../common/request-context.js';
import { FLOW_ID_SCHEMA, SESSION_ID_SCHEMA } from './verification-flows.openapi.js';
import { VerificationFlows, type FlowView } from './verification-flows.service.js';
import { SESSION_STATUSES, VerificationSessions, type CreatedSessionView, type SessionView } from './verification-sessions.service.js';

const FLOW = ref('VerificationFlow');
const SESSION = ref('VerificationSession');
const FLOW_PATH = ApiPathParam('id', FLOW_ID_SCHEMA, 'the flow');
const SESSION_PATH = ApiPathParam('id', SESSION_ID_SCHEMA, 'the session');
const EXAMPLE_FLOW = {
  name: 'Onboarding',
  steps: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin', 'bvn'] }, { type: 'selfie' }],
  decision: { faceMatchThreshold: 80, reviewMarginPoints: 10, liveness: 'required' },
  branding: { displayName: 'Acme Bank', colour: '#1c7ed6', logoUrl: null },
  allowedOrigins: ['https://acme.example'],
  redirectUrl: 'https://acme.example/onboarding/done',
  sessionLifetimeSeconds: 1_800,
};

/**
 * Flows and their sessions, of the key's organization and environment, whatever the organization's
 * status: they run no check themselves; the checks a session runs are refused as any other when the
 * organization may not run checks.
 */
@ApiSecurity('serviceKey')
@Controller('v1')
@UseGuards(ApiKeyGuard)
@AnyOrganizationStatus()
export class VerificationFlowsController {
  constructor(
    @Inject(VerificationFlows) private readonly flows: VerificationFlows,
    @Inject(VerificationSessions) private readonly sessions: VerificationSessions,
  ) {}

  @Post('verification_flows')
  @HttpCode(201)
  @ApiRoute(
    'createVerificationFlow',
    'Verification flows',
    'Create a flow',
    'Version 1 of a flow: its steps, decision rule, branding, allowed origins, redirect and session lifetime.',
  )
  @ApiJsonBody(ref('VerificationFlowInput'), { onboarding: { summary: 'NIN or BVN, then a selfie', value: EXAMPLE_FLOW } })
  @ApiSuccess(201, 'The flow', FLOW)
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, 'personal_data_destroyed')
  async create(@Req() request: KeyedRequest, @Body() body: unknown): Promise<SuccessEnvelope<FlowView>> {
    const key = authenticatedKey(request);
    return ok(await this.flows.create(key, body, commandContext(request, keyActor(key))));
  }

  @Post('verification_flows/:id/versions')
  @HttpCode(201)
  @ApiRoute(
    'publishVerificationFlowVersion',
    'Verification flows',
    'Publish a new version',
    'The whole definition again, as the next version. Sessions already started keep the version they started with.',
  )
  @FLOW_PATH
  @ApiJsonBody(ref('VerificationFlowInput'), {
    onboarding: { summary: 'A higher threshold', value: { ...EXAMPLE_FLOW, decision: { faceMatchThreshold: 90, reviewMarginPoints: 5 } } },
  })
  @ApiSuccess(201, 'The flow at its new version', FLOW)
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, 'not_found', 'conflict', 'personal_data_destroyed')
  async publish(@Req() request: KeyedRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<FlowView>> {
    const key = authenticatedKey(request);
    return ok(await this.flows.publish(key, id, body, commandContext(request, keyActor(key))));
  }

  @Post('verification_flows/:id/links')
  @HttpCode(201)
  @ApiRoute(
    'createVerificationFlowLink',
    'Verification flows',
    'Create a reusable link',
    `Each visit of the link starts a session of the flow's newest version, its checks run on this key (and counted against its rate limit); the session's customerId is \`link:{id}\`. A flow has at most ${MAX_FLOW_LINKS} links (409 \`conflict\` past them).`,
  )
  @FLOW_PATH
  @ApiSuccess(201, 'The link', ref('VerificationFlowLink'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, 'not_found', 'conflict', 'personal_data_destroyed')
  async createLink(@Req() request: KeyedRequest, @Param('id') id: string): Promise<SuccessEnvelope<{ id: string; flowId: string; url: string; createdAt: string }>> {
    const key = authenticatedKey(request);
    const link = await this.flows.createLink(key, id, key.keyId, commandContext(request, keyActor(key)));
    return ok({ ...link, url: this.sessions.publicUrl(`/verify/start/${link.id}`) });
  }

  @Get('verification_flows')
  @ApiRoute('listVerificationFlows', 'Verification flows', 'List flows', "The key's environment's flows at their newest versions, newest first.")
  @ApiPaging()
  @ApiSuccess(200, 'A page of flows', { type: 'array', items: FLOW }, ref('PagingMeta'))
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS, 'personal_data_destroyed')
  async list(@Req() request: KeyedRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<FlowView[]>> {
    const { page, pageSize } = paging(query ?? {});
    const { total, flows } = await this.flows.list(authenticatedKey(request), page, pageSize);
    return ok(flows, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }

  @Get('verification_flows/:id')
  @ApiRoute('getVerificationFlow', 'Verification flows', 'Get a flow', 'At its newest version.')
  @FLOW_PATH
  @ApiSuccess(200, 'The flow', FLOW)
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS, 'not_found', 'personal_data_destroyed')
  async get(@Req() request: KeyedRequest, @Param('id') id: string): Promise<SuccessEnvelope<FlowView>> {
    return ok(await this.flows.get(authenticatedKey(request), id));
  }

  @Post('verification_sessions')
  @HttpCode(201)
  @ApiRoute(
    'createVerificationSession',
    'Verification flows',
    'Start a session',
    "One person's pass through the flow's newest version. Send the person to hostedUrl; the clientSecret (in its fragment) is shown this once. The checks the session runs are ordinary verifications on this key, charged to its wallet.",
  )
  @ApiJsonBody(ref('VerificationSessionInput'), {
    customer: { summary: 'For one of your customers', value: { flowId: 'vfl_01JD3Q9ZK8W6V2C4X7N5B0M1TR', customerId: 'cus_4821', metadata: { plan: 'gold' } } },
  })
  @ApiSuccess(201, 'The session, with its hosted URL and client secret', ref('CreatedVerificationSession'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, 'personal_data_destroyed')
  async startSession(@Req() request: KeyedRequest, @Body() body: unknown): Promise<SuccessEnvelope<CreatedSessionView>> {
    const key = authenticatedKey(request);
    return ok(await this.sessions.create(key, body, commandContext(request, keyActor(key))));
  }

  @Get('verification_sessions')
  @ApiRoute('listVerificationSessions', 'Verification flows', 'List sessions', "The key's environment's sessions, newest first.")
  @ApiPaging()
  @ApiQuery({ name: 'status', required: false, description: 'only sessions with this status', schema: { type: 'string', enum: [...SESSION_STATUSES] } })
  @ApiQuery({ name: 'flowId', required: false, description: 'only sessions of this flow', schema: FLOW_ID_SCHEMA })
  @ApiSuccess(200, 'A page of sessions', { type: 'array', items: SESSION }, ref('PagingMeta'))
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS)
  async listSessions(@Req() request: KeyedRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<SessionView[]>> {
    const { page: pageNumber, pageSize, ...filters } = query ?? {};
    const { page, pageSize: size } = paging({ page: pageNumber, pageSize });
    const { total, sessions } = await this.sessions.list(authenticatedKey(request), filters, page, size);
    return ok(sessions, { total, page, pageSize: size, totalPages: Math.ceil(total / size) });
  }

  @Get('verification_sessions/:id')
  @ApiRoute('getVerificationSession', 'Verification flows', 'Get a session', 'Its status and, once decided, the decision and the verifications it ran.')
  @SESSION_PATH
  @ApiSuccess(200, 'The session', SESSION)
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS, 'not_found')
  async getSession(@Req() request: KeyedRequest, @Param('id') id: string): Promise<SuccessEnvelope<SessionView>> {
    return ok(await this.sessions.get(authenticatedKey(request), id));
  }

  @Post('verification_sessions/:id/cancel')
  @HttpCode(200)
  @ApiRoute('cancelVerificationSession', 'Verification flows', 'Cancel a session', 'Its client secret stops working. A submitted or ended session cannot be cancelled.')
  @SESSION_PATH
  @ApiSuccess(200, 'The session', SESSION)
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, 'not_found', 'session_closed')
  async cancel(@Req() request: KeyedRequest, @Param('id') id: string): Promise<SuccessEnvelope<SessionView>> {
    const key = authenticatedKey(request);
    return ok(await this.sessions.cancel(key, id, commandContext(request, keyActor(key))));
  }

  @Post('verification_sessions/:id/erase')
  @HttpCode(200)
  @ApiRoute(
    'eraseVerificationSession',
    'Verification flows',
    "Erase a session's personal data",
    'The selfies, the customer id, metadata, consent and identity number become unreadable for good, and the verifications the session ran are erased.',
  )
  @SESSION_PATH
  @ApiSuccess(200, 'The session, erased', SESSION)
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, 'not_found', 'conflict', 'legal_hold')
  async erase(@Req() request: KeyedRequest, @Param('id') id: string): Promise<SuccessEnvelope<SessionView>> {
    const key = authenticatedKey(request);
    return ok(await this.sessions.erase(key, id, commandContext(request, keyActor(key))));
  }
}
