import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Put, Query, Req, UseGuards } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';
import { AnyOrganizationStatus, ApiKeyGuard, authenticatedKey, keyActor, type KeyedRequest } from '../auth/api-key.guard.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { ANY_ROUTE_ERRORS, ApiErrors, ApiJsonBody, ApiPaging, ApiPathParam, ApiRoute, ApiSuccess, BODY_ERRORS, KEY_ERRORS, ref } from '../common/openapi.js';
import { paging } from '../common/paging.js';
import { commandContext } from '../common/request-context.js';
import { parseEndpointInput } from './webhook-endpoint.input.js';
import { WebhookEndpoints, type CreatedEndpointView, type EndpointView } from './webhook-endpoints.service.js';
import { DELIVERY_ID_SCHEMA, ENDPOINT_ID_SCHEMA } from './webhook.openapi.js';
import { parseOverlap, parseRange, parseThreshold } from './webhook-requests.js';
import type { DeliveryView } from './webhook.read-model.js';

const ID = ApiPathParam('id', ENDPOINT_ID_SCHEMA, 'the webhook endpoint');
const DELIVERY = ApiPathParam('deliveryId', DELIVERY_ID_SCHEMA, 'the delivery');
const ENDPOINT = ref('WebhookEndpoint');

/** The key's environment's webhook endpoints (the key's organization and environment own them). */
@ApiSecurity('serviceKey')
@Controller('v1')
@UseGuards(ApiKeyGuard)
@AnyOrganizationStatus()
export class WebhookEndpointsController {
  constructor(@Inject(WebhookEndpoints) private readonly endpoints: WebhookEndpoints) {}

  @Post('webhook_endpoints')
  @HttpCode(201)
  @ApiRoute('createWebhookEndpoint', 'Webhooks', 'Add a webhook endpoint', "For the key's environment. The answer carries the signing secret, shown this once.")
  @ApiJsonBody(ref('WebhookEndpointInput'), {
    all: { summary: 'Every event type', value: { url: 'https://hooks.acme.example/ledger', eventTypes: [], description: 'production receiver' } },
  })
  @ApiSuccess(201, 'The endpoint, with its secret', ref('CreatedWebhookEndpoint'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, 'conflict', 'personal_data_destroyed')
  async create(@Req() request: KeyedRequest, @Body() body: unknown): Promise<SuccessEnvelope<CreatedEndpointView>> {
    const key = authenticatedKey(request);
    const input = parseEndpointInput(body, 'create', { allowPrivateTargets: this.endpoints.allowPrivateTargets });
    return ok(await this.endpoints.create(key, input, commandContext(request, keyActor(key))));
  }

  @Get('webhook_endpoints')
  @ApiRoute('listWebhookEndpoints', 'Webhooks', 'List webhook endpoints', "The key's environment's endpoints, oldest first, without their secrets.")
  @ApiSuccess(200, 'The endpoints', { type: 'array', items: ENDPOINT })
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS)
  async list(@Req() request: KeyedRequest): Promise<SuccessEnvelope<EndpointView[]>> {
    const key = authenticatedKey(request);
    return ok(await this.endpoints.list(key.organizationId, key.environment));
  }

  @Get('webhook_endpoints/:id')
  @ApiRoute('getWebhookEndpoint', 'Webhooks', 'Get a webhook endpoint')
  @ID
  @ApiSuccess(200, 'The endpoint', ENDPOINT)
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS, 'not_found')
  async get(@Req() request: KeyedRequest, @Param('id') id: string): Promise<SuccessEnvelope<EndpointView>> {
    return ok(await this.endpoints.get(authenticatedKey(request), id));
  }

  @Patch('webhook_endpoints/:id')
  @ApiRoute('updateWebhookEndpoint', 'Webhooks', 'Change a webhook endpoint', 'Its URL, event types, description, or whether it is on (turn on again one the service turned off).')
  @ID
  @ApiJsonBody(ref('WebhookEndpointChange'), { off: { summary: 'Turn it off', value: { enabled: false } } })
  @ApiSuccess(200, 'The endpoint', ENDPOINT)
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, 'not_found', 'conflict')
  async update(@Req() request: KeyedRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<EndpointView>> {
    const key = authenticatedKey(request);
    const input = parseEndpointInput(body, 'update', { allowPrivateTargets: this.endpoints.allowPrivateTargets });
    return ok(await this.endpoints.update(key, id, input, commandContext(request, keyActor(key))));
  }

  @Delete('webhook_endpoints/:id')
  @ApiRoute('deleteWebhookEndpoint', 'Webhooks', 'Delete a webhook endpoint', 'Nothing more is sent to it.')
  @ID
  @ApiSuccess(200, 'Deleted', ref('DeletedWebhookEndpoint'))
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS, 'not_found', 'conflict')
  async delete(@Req() request: KeyedRequest, @Param('id') id: string): Promise<SuccessEnvelope<{ id: string; deleted: true }>> {
    const key = authenticatedKey(request);
    await this.endpoints.delete(key, id, commandContext(request, keyActor(key)));
    return ok({ id, deleted: true as const });
  }

  @Post('webhook_endpoints/:id/rotate_secret')
  @HttpCode(200)
  @ApiRoute(
    'rotateWebhookSecret',
    'Webhooks',
    'Rotate the signing secret',
    'A new secret, shown once; the previous one keeps signing beside it (two signatures) for the overlap, a day unless told.',
  )
  @ID
  @ApiJsonBody(ref('WebhookSecretRotation'), { hour: { summary: 'An hour of overlap', value: { overlapSeconds: 3_600 } } })
  @ApiSuccess(200, 'The new secret', ref('WebhookSecret'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, 'not_found', 'conflict')
  async rotate(@Req() request: KeyedRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<{ secret: string }>> {
    const key = authenticatedKey(request);
    return ok(await this.endpoints.rotateSecret(key, id, parseOverlap(body), commandContext(request, keyActor(key))));
  }

  @Get('webhook_endpoints/:id/deliveries')
  @ApiRoute(
    'listWebhookDeliveries',
    'Webhooks',
    'List deliveries and their attempts',
    "The endpoint's deliveries, newest first, each with its attempts: time, latency, status and the first 1 KiB of the answer.",
  )
  @ID
  @ApiPaging()
  @ApiSuccess(200, 'A page of deliveries', { type: 'array', items: ref('WebhookDelivery') }, ref('PagingMeta'))
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS, 'not_found')
  async deliveries(@Req() request: KeyedRequest, @Param('id') id: string, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<DeliveryView[]>> {
    const { page, pageSize } = paging(query ?? {});
    const { total, deliveries } = await this.endpoints.deliveries(authenticatedKey(request), id, page, pageSize);
    return ok(deliveries, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }

  @Post('webhook_endpoints/:id/deliveries/:deliveryId/resend')
  @HttpCode(200)
  @ApiRoute('resendWebhookDelivery', 'Webhooks', 'Resend a delivery', 'One more attempt, now, with the same webhook-id.')
  @ID
  @DELIVERY
  @ApiSuccess(200, 'Set going', ref('WebhookResent'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, 'not_found')
  async resend(@Req() request: KeyedRequest, @Param('id') id: string, @Param('deliveryId') deliveryId: string): Promise<SuccessEnvelope<{ resent: number }>> {
    await this.endpoints.resend(authenticatedKey(request), id, deliveryId);
    return ok({ resent: 1 });
  }

  @Post('webhook_endpoints/:id/deliveries/resend')
  @HttpCode(200)
  @ApiRoute(
    'resendWebhookDeliveries',
    'Webhooks',
    'Resend a time range',
    'Every delivery of the endpoint made from `from` (included) to `to` (excluded) that is not already waiting, at most 10,000.',
  )
  @ID
  @ApiJsonBody(ref('WebhookResendRange'), { day: { summary: 'One day', value: { from: '2026-11-22T00:00:00Z', to: '2026-11-23T00:00:00Z' } } })
  @ApiSuccess(200, 'Set going', ref('WebhookResent'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, 'not_found')
  async resendRange(@Req() request: KeyedRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<{ resent: number }>> {
    const { from, to } = parseRange(body);
    return ok({ resent: await this.endpoints.resendRange(authenticatedKey(request), id, from, to) });
  }

  @Get('wallet/low_balance_threshold')
  @ApiRoute('getLowBalanceThreshold', 'Webhooks', 'Get the low-balance threshold', "The key's environment's wallet's threshold for wallet.low_balance.")
  @ApiSuccess(200, 'The threshold', ref('LowBalanceThreshold'))
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS)
  async threshold(@Req() request: KeyedRequest): Promise<SuccessEnvelope<{ environment: string; thresholdKobo: number | null }>> {
    const key = authenticatedKey(request);
    return ok({ environment: key.environment, thresholdKobo: await this.endpoints.lowBalanceThreshold(key) });
  }

  @Put('wallet/low_balance_threshold')
  @ApiRoute(
    'setLowBalanceThreshold',
    'Webhooks',
    'Set the low-balance threshold',
    'When the balance falls below it, wallet.low_balance is sent and the owner and finance users are mailed, once per crossing; null turns it off.',
  )
  @ApiJsonBody(ref('LowBalanceThresholdInput'), { naira: { summary: '₦5,000', value: { thresholdKobo: 500_000 } } })
  @ApiSuccess(200, 'The threshold', ref('LowBalanceThreshold'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS)
  async setThreshold(@Req() request: KeyedRequest, @Body() body: unknown): Promise<SuccessEnvelope<{ environment: string; thresholdKobo: number | null }>> {
    const key = authenticatedKey(request);
    const thresholdKobo = await this.endpoints.setLowBalanceThreshold(key, parseThreshold(body), commandContext(request, keyActor(key)));
    return ok({ environment: key.environment, thresholdKobo });
  }
}
