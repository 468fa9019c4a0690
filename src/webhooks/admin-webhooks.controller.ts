import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Put, Query, Req, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiQuery } from '@nestjs/swagger';
import { AdminGuard, operatorActor, type AdminRequest } from '../common/admin.guard.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { isEnvironment } from '../common/environment.js';
import { ValidationFailed } from '../common/errors.js';
import {
  ADMIN_ERRORS,
  ADMIN_WRITE_ERRORS,
  ANY_ROUTE_ERRORS,
  ApiErrors,
  ApiJsonBody,
  ApiPaging,
  ApiPathParam,
  ApiRoute,
  ApiSuccess,
  BODY_ERRORS,
  ENVIRONMENT,
  ORGANIZATION_ID,
  ref,
} from '../common/openapi.js';
import { paging } from '../common/paging.js';
import { commandContext } from '../common/request-context.js';
import { isPlainObject } from '../common/validation.js';
import { parseEndpointInput } from './webhook-endpoint.input.js';
import { WebhookEndpoints, type CreatedEndpointView, type EndpointView } from './webhook-endpoints.service.js';
import { DELIVERY_ID_SCHEMA, ENDPOINT_ID_SCHEMA } from './webhook.openapi.js';
import { parseOverlap, parseRange, parseThreshold } from './webhook-requests.js';
import type { DeliveryView } from './webhook.read-model.js';

const ORGANIZATION = ApiPathParam('organizationId', ORGANIZATION_ID, 'the organization');
const ID = ApiPathParam('id', ENDPOINT_ID_SCHEMA, 'the webhook endpoint');
const ENDPOINT = ref('WebhookEndpoint');

function environmentOf(value: unknown, field: string): 'test' | 'live' {
  if (!isEnvironment(value)) throw new ValidationFailed([{ field, message: 'must be test or live' }]);
  return value;
}

/** The operators' view of organizations' webhook endpoints: the same operations as /v1, for any organization and environment. */
@ApiBearerAuth('adminToken')
@Controller('admin/v1')
@UseGuards(AdminGuard)
export class AdminWebhooksController {
  constructor(@Inject(WebhookEndpoints) private readonly endpoints: WebhookEndpoints) {}

  @Get('organizations/:organizationId/webhook_endpoints')
  @ApiRoute('adminListWebhookEndpoints', 'Admin: webhooks', "List an organization's webhook endpoints", 'Both environments unless `environment` is given.')
  @ORGANIZATION
  @ApiQuery({ name: 'environment', required: false, schema: ENVIRONMENT as never })
  @ApiSuccess(200, 'The endpoints', { type: 'array', items: ENDPOINT })
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async list(@Param('organizationId') organizationId: string, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<EndpointView[]>> {
    const environment = query?.environment === undefined ? null : environmentOf(query.environment, 'environment');
    await this.endpoints.assertOrganization(organizationId);
    return ok(await this.endpoints.list(organizationId, environment));
  }

  @Post('organizations/:organizationId/webhook_endpoints')
  @HttpCode(201)
  @ApiRoute('adminCreateWebhookEndpoint', 'Admin: webhooks', 'Add a webhook endpoint to an organization', 'As on /v1, with the environment in the body. The secret is shown once.')
  @ORGANIZATION
  @ApiJsonBody(ref('AdminWebhookEndpointInput'), {
    live: { summary: 'A live endpoint', value: { environment: 'live', url: 'https://hooks.acme.example/ledger', eventTypes: ['verification.completed'] } },
  })
  @ApiSuccess(201, 'The endpoint, with its secret', ref('CreatedWebhookEndpoint'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, ADMIN_WRITE_ERRORS, 'conflict', 'personal_data_destroyed')
  async create(@Req() request: AdminRequest, @Param('organizationId') organizationId: string, @Body() body: unknown): Promise<SuccessEnvelope<CreatedEndpointView>> {
    const environment = environmentOf(isPlainObject(body) ? body.environment : undefined, 'environment');
    const input = parseEndpointInput(body, 'create', { allowPrivateTargets: this.endpoints.allowPrivateTargets }, ['environment']);
    await this.endpoints.assertOrganization(organizationId);
    return ok(await this.endpoints.create({ organizationId, environment }, input, commandContext(request, operatorActor(request))));
  }

  @Get('webhook_endpoints/:id')
  @ApiRoute('adminGetWebhookEndpoint', 'Admin: webhooks', 'Get a webhook endpoint')
  @ID
  @ApiSuccess(200, 'The endpoint', ENDPOINT)
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async get(@Param('id') id: string): Promise<SuccessEnvelope<EndpointView>> {
    return ok(await this.endpoints.get(null, id));
  }

  @Patch('webhook_endpoints/:id')
  @ApiRoute('adminUpdateWebhookEndpoint', 'Admin: webhooks', 'Change a webhook endpoint')
  @ID
  @ApiJsonBody(ref('WebhookEndpointChange'), { off: { summary: 'Turn it off', value: { enabled: false } } })
  @ApiSuccess(200, 'The endpoint', ENDPOINT)
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, ADMIN_WRITE_ERRORS, 'conflict')
  async update(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<EndpointView>> {
    const input = parseEndpointInput(body, 'update', { allowPrivateTargets: this.endpoints.allowPrivateTargets });
    return ok(await this.endpoints.update(null, id, input, commandContext(request, operatorActor(request))));
  }

  @Delete('webhook_endpoints/:id')
  @ApiRoute('adminDeleteWebhookEndpoint', 'Admin: webhooks', 'Delete a webhook endpoint')
  @ID
  @ApiSuccess(200, 'Deleted', ref('DeletedWebhookEndpoint'))
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_WRITE_ERRORS, 'conflict')
  async delete(@Req() request: AdminRequest, @Param('id') id: string): Promise<SuccessEnvelope<{ id: string; deleted: true }>> {
    await this.endpoints.delete(null, id, commandContext(request, operatorActor(request)));
    return ok({ id, deleted: true as const });
  }

  @Post('webhook_endpoints/:id/rotate_secret')
  @HttpCode(200)
  @ApiRoute('adminRotateWebhookSecret', 'Admin: webhooks', 'Rotate the signing secret')
  @ID
  @ApiJsonBody(ref('WebhookSecretRotation'), { hour: { summary: 'An hour of overlap', value: { overlapSeconds: 3_600 } } })
  @ApiSuccess(200, 'The new secret', ref('WebhookSecret'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, ADMIN_WRITE_ERRORS, 'conflict')
  async rotate(@Req() request: AdminRequest, @Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<{ secret: string }>> {
    return ok(await this.endpoints.rotateSecret(null, id, parseOverlap(body), commandContext(request, operatorActor(request))));
  }

  @Get('webhook_endpoints/:id/deliveries')
  @ApiRoute('adminListWebhookDeliveries', 'Admin: webhooks', 'List deliveries and their attempts')
  @ID
  @ApiPaging()
  @ApiSuccess(200, 'A page of deliveries', { type: 'array', items: ref('WebhookDelivery') }, ref('PagingMeta'))
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async deliveries(@Param('id') id: string, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<DeliveryView[]>> {
    const { page, pageSize } = paging(query ?? {});
    const { total, deliveries } = await this.endpoints.deliveries(null, id, page, pageSize);
    return ok(deliveries, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }

  @Post('webhook_endpoints/:id/deliveries/:deliveryId/resend')
  @HttpCode(200)
  @ApiRoute('adminResendWebhookDelivery', 'Admin: webhooks', 'Resend a delivery')
  @ID
  @ApiPathParam('deliveryId', DELIVERY_ID_SCHEMA, 'the delivery')
  @ApiSuccess(200, 'Set going', ref('WebhookResent'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, ADMIN_WRITE_ERRORS)
  async resend(@Param('id') id: string, @Param('deliveryId') deliveryId: string): Promise<SuccessEnvelope<{ resent: number }>> {
    await this.endpoints.resend(null, id, deliveryId);
    return ok({ resent: 1 });
  }

  @Post('webhook_endpoints/:id/deliveries/resend')
  @HttpCode(200)
  @ApiRoute('adminResendWebhookDeliveries', 'Admin: webhooks', 'Resend a time range')
  @ID
  @ApiJsonBody(ref('WebhookResendRange'), { day: { summary: 'One day', value: { from: '2026-11-22T00:00:00Z', to: '2026-11-23T00:00:00Z' } } })
  @ApiSuccess(200, 'Set going', ref('WebhookResent'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, ADMIN_WRITE_ERRORS)
  async resendRange(@Param('id') id: string, @Body() body: unknown): Promise<SuccessEnvelope<{ resent: number }>> {
    const { from, to } = parseRange(body);
    return ok({ resent: await this.endpoints.resendRange(null, id, from, to) });
  }

  @Put('organizations/:organizationId/wallets/:environment/low_balance_threshold')
  @ApiRoute('adminSetLowBalanceThreshold', 'Admin: webhooks', "Set a wallet's low-balance threshold", 'null turns the alert off.')
  @ORGANIZATION
  @ApiPathParam('environment', ENVIRONMENT, 'the wallet')
  @ApiJsonBody(ref('LowBalanceThresholdInput'), { naira: { summary: '₦5,000', value: { thresholdKobo: 500_000 } } })
  @ApiSuccess(200, 'The threshold', ref('LowBalanceThreshold'))
  @ApiErrors(ANY_ROUTE_ERRORS, BODY_ERRORS, ADMIN_WRITE_ERRORS)
  async setThreshold(
    @Req() request: AdminRequest,
    @Param('organizationId') organizationId: string,
    @Param('environment') environment: string,
    @Body() body: unknown,
  ): Promise<SuccessEnvelope<{ environment: string; thresholdKobo: number | null }>> {
    const owner = { organizationId, environment: environmentOf(environment, 'environment') };
    await this.endpoints.assertOrganization(organizationId);
    return ok({
      environment: owner.environment,
      thresholdKobo: await this.endpoints.setLowBalanceThreshold(owner, parseThreshold(body), commandContext(request, operatorActor(request))),
    });
  }
}
