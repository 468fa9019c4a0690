import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { WebhookDelivery } from './webhook-delivery.service.js';
import { WebhookEndpointsController } from './webhook-endpoints.controller.js';
import { WebhookEndpoints } from './webhook-endpoints.service.js';
import { AdminWebhooksController } from './admin-webhooks.controller.js';

/** Webhook endpoints (API, admin API, and the console through the exported service), and this instance's sender of their deliveries. */
@Module({
  imports: [AuthModule],
  controllers: [WebhookEndpointsController, AdminWebhooksController],
  providers: [WebhookEndpoints, WebhookDelivery],
  exports: [WebhookEndpoints],
})
export class WebhooksModule {}
