import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Put, Query, Req, UseGuards } from '@nestjs/common';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { isEnvironment, type Environment } from '../common/environment.js';
import { ValidationFailed } from '../common/errors.js';
import { paging } from '../common/paging.js';
import { commandContext } from '../common/request-context.js';
import { ConsoleAccess, consoleIdentity, ConsoleGuard, organizationOf, userActor, type ConsoleRequest } from '../console-auth/console.guard.js';
import { parseEndpointInput } from '../webhooks/webhook-endpoint.input.js';
import { WebhookEndpoints, type CreatedEndpointView, type EndpointView } from '../webhooks/webhook-endpoints.service.js';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/webhook.events.js';
import type { DeliveryView } from '../webhooks/webhook.read-model.js';
import { parseOverlap, parseThreshold } from '../webhooks/webhook-requests.js';
import { ConsoleRoute, jsonBody, list } from '../common/console-route.js';
import { ref } from '../common/openapi.js';

/** Who manages the endpoints: those who hold the keys. */
const DEVELOPERS = ['owner', 'developer'] as const;
/** Who reads and sets the wallet's low-balance threshold: those who see the wallet. */
const FINANCE = ['owner', 'finance'] as const;

interface Threshold {
  readonly environment: Environment;
  readonly thresholdKobo: number | null;
}

/**
 * The webhooks page and the wallet's low-balance threshold, for the user's organization and the
 * page's `?environment=` (test by default): the same service as /v1/webhook_endpoints, with the
 * user as actor, so an endpoint added here is the one the API lists and the sender delivers to.
 */
@Controller('console/api')
@UseGuards(ConsoleGuard)
export class ConsoleWebhooksController {
  constructor(@Inject(WebhookEndpoints) private readonly endpoints: WebhookEndpoints) {}

  /** The documented event types, for the page's choice (the server is their one list). */
  @Get('webhooks/event_types')
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('listWebhookEventTypes', 'Webhooks', 'The event types an endpoint may take', { status: 200, data: list(ref('WebhookEventType')) })
  eventTypes(): SuccessEnvelope<readonly string[]> {
    return ok(WEBHOOK_EVENT_TYPES);
  }

  @Get('webhooks/endpoints')
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('listWebhookEndpoints', 'Webhooks', 'The endpoints', { status: 200, data: list(ref('WebhookEndpoint')) })
  async list(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<EndpointView[]>> {
    const owner = this.owner(request, query);
    return ok(await this.endpoints.list(owner.organizationId, owner.environment));
  }

  @Post('webhooks/endpoints')
  @HttpCode(201)
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute(
    'createWebhookEndpoint',
    'Webhooks',
    'Add an endpoint: its secret, shown once',
    { status: 201, data: ref('CreatedWebhookEndpoint') },
    jsonBody(ref('WebhookEndpointInput')),
  )
  async create(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>, @Body() body: unknown): Promise<SuccessEnvelope<CreatedEndpointView>> {
    const owner = this.owner(request, query);
    const input = parseEndpointInput(body, 'create', { allowPrivateTargets: this.endpoints.allowPrivateTargets });
    return ok(await this.endpoints.create(owner, input, this.context(request)));
  }

  @Patch('webhooks/endpoints/:id')
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('updateWebhookEndpoint', 'Webhooks', 'Change an endpoint', { status: 200, data: ref('WebhookEndpoint') }, jsonBody(ref('WebhookEndpointChange')))
  async update(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<EndpointView>> {
    const owner = this.owner(request, query);
    const input = parseEndpointInput(body, 'update', { allowPrivateTargets: this.endpoints.allowPrivateTargets });
    return ok(await this.endpoints.update(owner, id, input, this.context(request)));
  }

  @Delete('webhooks/endpoints/:id')
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('deleteWebhookEndpoint', 'Webhooks', 'Delete an endpoint', { status: 200, data: ref('DeletedWebhookEndpoint') })
  async delete(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>, @Param('id') id: string): Promise<SuccessEnvelope<{ id: string; deleted: true }>> {
    await this.endpoints.delete(this.owner(request, query), id, this.context(request));
    return ok({ id, deleted: true as const });
  }

  @Post('webhooks/endpoints/:id/rotate_secret')
  @HttpCode(200)
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('rotateWebhookSecret', 'Webhooks', "Rotate an endpoint's secret", { status: 200, data: ref('WebhookSecret') }, jsonBody(ref('WebhookSecretRotation'), false))
  async rotate(
    @Req() request: ConsoleRequest,
    @Query() query: Record<string, unknown>,
    @Param('id') id: string,
    @Body() body: unknown,
  ): Promise<SuccessEnvelope<{ secret: string }>> {
    return ok(await this.endpoints.rotateSecret(this.owner(request, query), id, parseOverlap(body), this.context(request)));
  }

  @Get('webhooks/endpoints/:id/deliveries')
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('listWebhookDeliveries', 'Webhooks', "An endpoint's deliveries and their attempts", { status: 200, data: list(ref('WebhookDelivery')), meta: ref('PagingMeta') })
  async deliveries(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>, @Param('id') id: string): Promise<SuccessEnvelope<DeliveryView[]>> {
    const { environment: _environment, ...rest } = query ?? {};
    const { page, pageSize } = paging(rest);
    const { total, deliveries } = await this.endpoints.deliveries(this.owner(request, query), id, page, pageSize);
    return ok(deliveries, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }

  @Post('webhooks/endpoints/:id/deliveries/:deliveryId/resend')
  @HttpCode(200)
  @ConsoleAccess({ who: 'integrator', roles: DEVELOPERS })
  @ConsoleRoute('resendWebhookDelivery', 'Webhooks', 'Send a delivery again', { status: 200, data: ref('WebhookResent') })
  async resend(
    @Req() request: ConsoleRequest,
    @Query() query: Record<string, unknown>,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
  ): Promise<SuccessEnvelope<{ resent: number }>> {
    await this.endpoints.resend(this.owner(request, query), id, deliveryId);
    return ok({ resent: 1 });
  }

  @Get('wallet/low_balance_threshold')
  @ConsoleAccess({ who: 'integrator', roles: FINANCE })
  @ConsoleRoute('getLowBalanceThreshold', 'Webhooks', "The wallet's low-balance alert", { status: 200, data: ref('LowBalanceThreshold') })
  async threshold(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<Threshold>> {
    const owner = this.owner(request, query);
    return ok({ environment: owner.environment, thresholdKobo: await this.endpoints.lowBalanceThreshold(owner) });
  }

  @Put('wallet/low_balance_threshold')
  @ConsoleAccess({ who: 'integrator', roles: FINANCE })
  @ConsoleRoute(
    'setLowBalanceThreshold',
    'Webhooks',
    "Set the wallet's low-balance alert",
    { status: 200, data: ref('LowBalanceThreshold') },
    jsonBody(ref('LowBalanceThresholdInput')),
  )
  async setThreshold(@Req() request: ConsoleRequest, @Query() query: Record<string, unknown>, @Body() body: unknown): Promise<SuccessEnvelope<Threshold>> {
    const owner = this.owner(request, query);
    return ok({ environment: owner.environment, thresholdKobo: await this.endpoints.setLowBalanceThreshold(owner, parseThreshold(body), this.context(request)) });
  }

  private context(request: ConsoleRequest) {
    return commandContext(request, userActor(consoleIdentity(request).user));
  }

  /** The user's organization, and the page's environment. */
  private owner(request: ConsoleRequest, query: Record<string, unknown> | undefined): { organizationId: string; environment: Environment } {
    const environment = query?.environment ?? 'test';
    if (!isEnvironment(environment)) throw new ValidationFailed([{ field: 'environment', message: 'environment must be "test" or "live"' }]);
    return { organizationId: organizationOf(consoleIdentity(request).user), environment };
  }
}
