import type { WebhookEnvironment, WebhookEventType } from './webhooks.js';

/**
 * The webhook endpoints of the key's organization and environment (`/v1/webhook_endpoints`).
 * Typed by hand from the API's contract until the OpenAPI document describes these routes; the
 * answers use the same envelope as every other route (`{status: true, data}`).
 */

export interface WebhookEndpoint {
  readonly id: string;
  /** Where deliveries are POSTed. */
  readonly url: string;
  /** The event types it receives; empty for all of them. */
  readonly eventTypes: readonly WebhookEventType[];
  readonly description: string | null;
  readonly enabled: boolean;
  readonly environment: WebhookEnvironment;
  readonly createdAt: string;
}

/** An endpoint as its creation answers it: the only time its signing secret (`whsec_…`) is shown. */
export interface CreatedWebhookEndpoint extends WebhookEndpoint {
  readonly secret: string;
}

export interface WebhookEndpointInput {
  readonly url: string;
  /** Empty (or absent) for every event type. */
  readonly eventTypes?: readonly WebhookEventType[];
  readonly description?: string;
  readonly enabled?: boolean;
}

export type WebhookEndpointChanges = Partial<WebhookEndpointInput>;

/** One delivery of one event to one endpoint, with its attempts' outcome so far. */
export interface WebhookDelivery {
  readonly id: string | number;
  readonly status: 'pending' | 'succeeded' | 'failed';
  readonly eventType?: WebhookEventType;
  /** Further fields (attempts, times, last status code) as the service answers them. */
  readonly [field: string]: unknown;
}

export interface WebhookEndpoints {
  /** Creates an endpoint; the answer holds its signing secret, shown this once. */
  create(input: WebhookEndpointInput): Promise<CreatedWebhookEndpoint>;
  list(): Promise<WebhookEndpoint[]>;
  get(id: string): Promise<WebhookEndpoint>;
  update(id: string, changes: WebhookEndpointChanges): Promise<WebhookEndpoint>;
  delete(id: string): Promise<void>;
  /**
   * A new signing secret, shown this once. For `overlapSeconds` the old secret keeps signing too
   * (both signatures in each delivery), so receivers can switch without refusing a delivery.
   */
  rotateSecret(id: string, options?: { overlapSeconds?: number }): Promise<{ secret: string }>;
  deliveries(id: string): Promise<WebhookDelivery[]>;
  /** Sends a delivery again (same `webhook-id`, so a receiver that deduplicates sees it once). */
  resend(id: string, deliveryId: string | number): Promise<WebhookDelivery>;
}

/** Sends one JSON request and answers the envelope's `data`, throwing an ApiError on an error answer. */
export type JsonRequest = <T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => Promise<T>;

export function webhookEndpoints(request: JsonRequest): WebhookEndpoints {
  const endpoint = (id: string) => `/v1/webhook_endpoints/${encodeURIComponent(id)}`;
  return {
    create: (input) => request('POST', '/v1/webhook_endpoints', { eventTypes: [], ...input }),
    list: () => request('GET', '/v1/webhook_endpoints'),
    get: (id) => request('GET', endpoint(id)),
    update: (id, changes) => request('PATCH', endpoint(id), changes),
    delete: async (id) => {
      await request('DELETE', endpoint(id));
    },
    rotateSecret: (id, options = {}) => request('POST', `${endpoint(id)}/rotate_secret`, options),
    deliveries: (id) => request('GET', `${endpoint(id)}/deliveries`),
    resend: (id, deliveryId) => request('POST', `${endpoint(id)}/deliveries/${encodeURIComponent(String(deliveryId))}/resend`),
  };
}
