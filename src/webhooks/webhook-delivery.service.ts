import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG } from '../config/runtime.js';
import { PG_POOL } from '../database/pool.js';
import { WebhookEndpoints } from './webhook-endpoints.service.js';
import { WebhookSender } from './webhook-sender.js';

/** How often an idle sender looks for due deliveries: a delivery leaves within this of its commit (plus the subscriber's lag). */
const POLL_MS = 100;
/** Sends in flight at once in one instance, every endpoint together. */
const MAX_IN_FLIGHT = 64;

/** Runs this instance's webhook sender from the application's start to its shutdown (unless WEBHOOK_SEND=false). */
@Injectable()
export class WebhookDelivery implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private sender: WebhookSender | undefined;

  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(WebhookEndpoints) private readonly endpoints: WebhookEndpoints,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.webhooks.send) return;
    this.sender = new WebhookSender(this.pool, this.clock, this.endpoints.sealing, {
      allowPrivateTargets: this.endpoints.allowPrivateTargets,
      timeoutMs: this.config.webhooks.timeoutMs,
      concurrencyPerEndpoint: this.config.webhooks.concurrencyPerEndpoint,
      maxInFlight: MAX_IN_FLIGHT,
      pollMs: POLL_MS,
      random: Math.random,
      onEndpointFailing: (endpointId) => this.endpoints.disableFailing(endpointId),
      // Ids and messages of our own making only: never a body, a secret or a URL.
      log: (message) => this.logger.warn(message),
    });
    this.sender.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.sender?.stop();
  }
}
