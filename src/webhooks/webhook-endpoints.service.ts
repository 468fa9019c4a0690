import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { Clock } from '../common/clock.js';
import { Conflict, NotFound, ValidationFailed } from '../common/errors.js';
import { SYSTEM_ACTOR, toAppend, type CommandContext } from '../common/event.js';
import { IdGenerator } from '../common/ids.js';
import { streams } from '../common/streams.js';
import type { AppConfig } from '../config/config.js';
import { CONFIG, RUNTIME, type Runtime } from '../config/runtime.js';
import { DataKeys } from '../data-protection/data-keys.js';
import { KeyManagement } from '../data-protection/key-management.port.js';
import { PG_POOL } from '../database/pool.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { EventSourcedHandler, type Stream } from '../event-sourcing/event-sourced-handler.js';
import { linearJitter } from '../event-sourcing/retry.js';
import { ProjectionWaiter } from '../read-models/projection-waiter.js';
import { EndpointSealing, newSigningSecret } from './endpoint-sealing.js';
import { DEFAULT_ROTATION_OVERLAP_SECONDS, webhookEndpointDecider, type Owner, type WebhookEndpointCommand, type WebhookEndpointState } from './webhook-endpoint.decider.js';
import { webhookStreams, type LowBalanceThresholdSet, type WebhookEndpointEvent } from './webhook-endpoint.events.js';
import type { EndpointInput } from './webhook-endpoint.input.js';
import { readDeliveries, readEndpoint, readEndpoints, WEBHOOKS_SUBSCRIBER, type DeliveryView, type EndpointRow } from './webhook.read-model.js';

const RETRY = linearJitter(10, 5);
const PAGING = { pageSize: 100, maxPages: 10 };
/** An organization's endpoints per environment. */
export const MAX_ENDPOINTS = 20;
/** Deliveries one resend of a time range sets going again. */
export const MAX_RESEND = 10_000;
export const ENDPOINT_ID = /^whe_[0-9A-HJKMNP-TV-Z]{26}$/;
const ORGANIZATION_ID = /^org_[0-9A-HJKMNP-TV-Z]{26}$/;
/** ₦1,000,000,000: past any wallet. */
const MAX_THRESHOLD_KOBO = 100_000_000_000;
/** Who hears that an endpoint was turned off for failing. */
const FAILING_ROLES = ['owner', 'developer'];

export interface EndpointView {
  readonly id: string;
  readonly url: string;
  readonly eventTypes: string[];
  readonly description: string | null;
  readonly enabled: boolean;
  readonly environment: 'test' | 'live';
  readonly createdAt: string;
}

export interface CreatedEndpointView extends EndpointView {
  /** Shown once. */
  readonly secret: string;
}

function stream(endpointId: string): Stream<WebhookEndpointState, WebhookEndpointCommand, WebhookEndpointEvent> {
  return { id: webhookStreams.endpoint(endpointId), decider: webhookEndpointDecider };
}

/**
 * Webhook endpoints: the `webhookEndpoint-{id}` streams, written through the event-sourcing kernel,
 * read from the `webhooks` subscriber's table once it has applied the write. `owner` is the key's
 * organization and environment on /v1 (another's endpoint is not found), null for operators.
 */
@Injectable()
export class WebhookEndpoints {
  private readonly handler: EventSourcedHandler<WebhookEndpointState, WebhookEndpointCommand, WebhookEndpointEvent>;
  readonly sealing: EndpointSealing;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(Clock) private readonly clock: Clock,
    @Inject(IdGenerator) private readonly ids: IdGenerator,
    @Inject(KeyManagement) keys: KeyManagement,
    @Inject(DataKeys) dataKeys: DataKeys,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(ProjectionWaiter) private readonly waiter: ProjectionWaiter,
    @Inject(CONFIG) private readonly config: AppConfig,
    @Inject(RUNTIME) private readonly runtime: Runtime,
  ) {
    this.handler = new EventSourcedHandler({ store, clock, ids, retry: RETRY, paging: PAGING });
    this.sealing = new EndpointSealing(dataKeys, keys);
  }

  /** Private targets and plain http: on the embedded default, or when the operator allows them. */
  get allowPrivateTargets(): boolean {
    return this.runtime.embedded || this.config.webhooks.allowPrivateTargets;
  }

  /** A new id in the ULID form of the service's other ids. */
  private ulid(): string {
    return this.ids.reference().slice('vrf_'.length);
  }

  async create(owner: Owner, input: EndpointInput, context: CommandContext): Promise<CreatedEndpointView> {
    if (input.url === undefined) throw new ValidationFailed([{ field: 'url', message: 'is required' }]);
    if ((await readEndpoints(this.pool, owner.organizationId, owner.environment)).length >= MAX_ENDPOINTS) {
      throw new Conflict(`An organization has at most ${MAX_ENDPOINTS} webhook endpoints per environment`);
    }
    const endpointId = `whe_${this.ulid()}`;
    const secretId = this.ulid();
    const secret = newSigningSecret();
    const description = input.description ?? null;
    const handled = await this.handler.handle(
      stream(endpointId),
      {
        type: 'CreateWebhookEndpoint',
        endpointId,
        organizationId: owner.organizationId,
        environment: owner.environment,
        target: await this.sealing.sealTarget(owner.organizationId, endpointId, { url: input.url, description }),
        masterKeyId: this.sealing.masterKeyId,
        eventTypes: input.eventTypes ?? [],
        enabled: input.enabled ?? true,
        secret: { secretId, secret: await this.sealing.sealSecret(owner.organizationId, endpointId, secretId, secret), masterKeyId: this.sealing.masterKeyId },
      },
      context,
    );
    if (handled.status === 'conflict') throw new Conflict('The endpoint is being changed concurrently; try again');
    if (handled.status === 'appended') await this.settle(handled.position);
    const state = handled.folded.state;
    return {
      id: endpointId,
      url: input.url,
      eventTypes: [...state.eventTypes],
      description,
      enabled: state.enabled,
      environment: owner.environment as 'test' | 'live',
      // The creation's own time, which the read model stores too: the answer and later reads agree.
      createdAt: (state.createdAt ?? this.clock.now()).toISOString(),
      secret,
    };
  }

  /** 404 unless the organization exists (its stream is the authority): the admin routes name it in their path. */
  async assertOrganization(organizationId: string): Promise<void> {
    if (!ORGANIZATION_ID.test(organizationId) || (await this.store.readStream(streams.organization(organizationId), { maxCount: 1 })).length === 0) {
      throw new NotFound('No organization with this id');
    }
  }

  async list(organizationId: string, environment: string | null): Promise<EndpointView[]> {
    return Promise.all((await readEndpoints(this.pool, organizationId, environment)).map((row) => this.view(row)));
  }

  async get(owner: Owner | null, endpointId: string): Promise<EndpointView> {
    return this.view(await this.row(owner, endpointId));
  }

  async update(owner: Owner | null, endpointId: string, input: EndpointInput, context: CommandContext): Promise<EndpointView> {
    const current = await this.row(owner, endpointId);
    let target: { sealed: string; masterKeyId: string } | undefined;
    if (input.url !== undefined || input.description !== undefined) {
      const opened = await this.sealing.openTarget(current.organization_id, endpointId, current.target);
      const next = { url: input.url ?? opened.url, description: input.description === undefined ? opened.description : input.description };
      if (next.url !== opened.url || next.description !== opened.description)
        target = { sealed: await this.sealing.sealTarget(current.organization_id, endpointId, next), masterKeyId: this.sealing.masterKeyId };
    }
    await this.execute(endpointId, { type: 'UpdateWebhookEndpoint', owner, target, eventTypes: input.eventTypes, enabled: input.enabled }, context);
    return this.get(owner, endpointId);
  }

  async delete(owner: Owner | null, endpointId: string, context: CommandContext): Promise<void> {
    await this.row(owner, endpointId);
    await this.execute(endpointId, { type: 'DeleteWebhookEndpoint', owner }, context);
  }

  async rotateSecret(owner: Owner | null, endpointId: string, overlapSeconds: number | undefined, context: CommandContext): Promise<{ secret: string }> {
    const current = await this.row(owner, endpointId);
    const secretId = this.ulid();
    const secret = newSigningSecret();
    await this.execute(
      endpointId,
      {
        type: 'RotateWebhookSecret',
        owner,
        secret: { secretId, secret: await this.sealing.sealSecret(current.organization_id, endpointId, secretId, secret), masterKeyId: this.sealing.masterKeyId },
        overlapSeconds: overlapSeconds ?? DEFAULT_ROTATION_OVERLAP_SECONDS,
        at: this.clock.now(),
      },
      context,
    );
    return { secret };
  }

  /**
   * Turns off an endpoint whose deliveries kept failing for days, and tells the organization's
   * owner and developer users, once: the mail goes only when this call disabled it.
   */
  async disableFailing(endpointId: string): Promise<void> {
    const handled = await this.handler.handle(stream(endpointId), { type: 'DisableFailingWebhookEndpoint' }, { correlationId: `webhooks-${endpointId}`, actor: SYSTEM_ACTOR });
    if (handled.status !== 'appended') return;
    const state = handled.folded.state;
    await this.pool.query(
      `insert into console_outbox (recipient, subject, body, link, created_at)
       select 'user:' || id, $3, $4, null, $5 from console_users where kind = 'integrator' and organization_id = $1 and role = any($2::text[])`,
      [
        state.organizationId,
        FAILING_ROLES,
        'A webhook endpoint was turned off',
        `Deliveries to your ${state.environment} webhook endpoint ${endpointId} kept failing for days, so it was turned off. Fix the receiver, turn the endpoint on again, and resend what it missed.`,
        this.clock.now(),
      ],
    );
  }

  async deliveries(owner: Owner | null, endpointId: string, page: number, pageSize: number): Promise<{ total: number; deliveries: DeliveryView[] }> {
    await this.row(owner, endpointId);
    return readDeliveries(this.pool, endpointId, page, pageSize);
  }

  /** One more attempt of a delivery, now, whatever its state; an exhausted one goes back to failed if it fails again. */
  async resend(owner: Owner | null, endpointId: string, deliveryId: string): Promise<void> {
    await this.row(owner, endpointId);
    if (!/^\d{1,18}$/.test(deliveryId)) throw new NotFound('No delivery with that id');
    const { rowCount } = await this.pool.query("update webhook_deliveries set status = 'pending', next_attempt_at = $3, finished_at = null where id = $1 and endpoint_id = $2", [
      deliveryId,
      endpointId,
      this.clock.now(),
    ]);
    if (rowCount === 0) throw new NotFound('No delivery with that id');
  }

  /** Sends again every delivery of the endpoint made in [from, to) that is not waiting already; answers how many. */
  async resendRange(owner: Owner | null, endpointId: string, from: Date, to: Date): Promise<number> {
    await this.row(owner, endpointId);
    const { rowCount } = await this.pool.query(
      `update webhook_deliveries set status = 'pending', next_attempt_at = $4, finished_at = null
        where id in (select id from webhook_deliveries where endpoint_id = $1 and created_at >= $2 and created_at < $3 and status <> 'pending' order by id limit $5)`,
      [endpointId, from, to, this.clock.now(), MAX_RESEND],
    );
    return rowCount ?? 0;
  }

  /** The wallet's low-balance threshold (kobo; null: off), as the subscriber applies it. */
  async lowBalanceThreshold(owner: Owner): Promise<number | null> {
    const { rows } = await this.pool.query<{ threshold_kobo: string | null }>('select threshold_kobo from webhook_wallet_alerts where organization_id = $1 and environment = $2', [
      owner.organizationId,
      owner.environment,
    ]);
    return rows.length === 0 || rows[0].threshold_kobo === null ? null : Number(rows[0].threshold_kobo);
  }

  /**
   * Sets the threshold below which the wallet's balance fires wallet.low_balance (and mails its
   * owner and finance users), once per crossing. One fact per change on `walletAlert-{org}.{env}`:
   * the last one wins, so the append expects no revision.
   */
  async setLowBalanceThreshold(owner: Owner, thresholdKobo: number | null, context: CommandContext): Promise<number | null> {
    if (thresholdKobo !== null && (!Number.isSafeInteger(thresholdKobo) || thresholdKobo < 0 || thresholdKobo > MAX_THRESHOLD_KOBO)) {
      throw new ValidationFailed([{ field: 'thresholdKobo', message: `must be a whole number of kobo from 0 to ${MAX_THRESHOLD_KOBO}, or null` }]);
    }
    const event: LowBalanceThresholdSet = {
      type: 'LowBalanceThresholdSet',
      data: { schemaVersion: 1, organizationId: owner.organizationId, environment: owner.environment, thresholdKobo },
    };
    const appended = await this.store.append(
      webhookStreams.walletAlert(owner.organizationId, owner.environment),
      [toAppend(event, this.ids.eventId(), context, this.clock.now())],
      {
        expectedRevision: 'any',
      },
    );
    await this.settle(appended.position);
    return thresholdKobo;
  }

  private async execute(endpointId: string, command: WebhookEndpointCommand, context: CommandContext): Promise<void> {
    const handled = await this.handler.handle(stream(endpointId), command, context);
    if (handled.status === 'conflict') throw new Conflict('The endpoint is being changed concurrently; try again');
    if (handled.status === 'appended') await this.settle(handled.position);
  }

  /** Waits (bounded) for the subscriber to apply a write, so the next read on any instance shows it. */
  private async settle(position: bigint): Promise<void> {
    await this.waiter.waitFor([WEBHOOKS_SUBSCRIBER], position);
  }

  private async row(owner: Owner | null, endpointId: string): Promise<EndpointRow> {
    const row = ENDPOINT_ID.test(endpointId) ? await readEndpoint(this.pool, endpointId) : undefined;
    if (row === undefined || (owner !== null && (row.organization_id !== owner.organizationId || row.environment !== owner.environment))) {
      throw new NotFound('No webhook endpoint with that id');
    }
    return row;
  }

  private async view(row: EndpointRow): Promise<EndpointView> {
    const target = await this.sealing.openTarget(row.organization_id, row.id, row.target);
    return {
      id: row.id,
      url: target.url,
      eventTypes: row.event_types,
      description: target.description,
      enabled: row.enabled,
      environment: row.environment,
      createdAt: row.created_at.toISOString(),
    };
  }
}
