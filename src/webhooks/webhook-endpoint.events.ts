import type { Event } from '../common/event.js';

/**
 * Events of `webhookEndpoint-{endpointId}`. The URL and description are the integrator's free text
 * and the signing secrets are credentials: each travels only sealed under the organization's
 * key-encryption key (see endpoint-sealing.ts), bound to the organization and the endpoint (and the
 * secret's id), never in clear. `masterKeyId` names what seals them: `organization`, or, on values
 * sealed under the master key directly (no `organization:` prefix), that master key's id.
 */
export type WebhookEndpointCreated = Event<
  'WebhookEndpointCreated',
  {
    endpointId: string;
    organizationId: string;
    environment: string;
    /** Sealed `{url, description}`. */
    target: string;
    /** Empty: every type. */
    eventTypes: string[];
    enabled: boolean;
    secretId: string;
    /** Sealed `whsec_…`. */
    secret: string;
    masterKeyId: string;
  }
>;
/** Only the fields that changed are present. */
export type WebhookEndpointUpdated = Event<'WebhookEndpointUpdated', { endpointId: string; target?: string; masterKeyId?: string; eventTypes?: string[]; enabled?: boolean }>;
/** A new secret signs from now on; the previous one signs beside it until `previousValidUntil`. */
export type WebhookEndpointSecretRotated = Event<
  'WebhookEndpointSecretRotated',
  { endpointId: string; secretId: string; secret: string; masterKeyId: string; previousSecretId: string; previousValidUntil: string }
>;
/** The service turned the endpoint off: its deliveries kept failing for days. */
export type WebhookEndpointDisabled = Event<'WebhookEndpointDisabled', { endpointId: string; reason: 'failing' }>;
export type WebhookEndpointDeleted = Event<'WebhookEndpointDeleted', { endpointId: string }>;

export type WebhookEndpointEvent = WebhookEndpointCreated | WebhookEndpointUpdated | WebhookEndpointSecretRotated | WebhookEndpointDisabled | WebhookEndpointDeleted;

export const WEBHOOK_ENDPOINT_EVENT_TYPES: readonly WebhookEndpointEvent['type'][] = [
  'WebhookEndpointCreated',
  'WebhookEndpointUpdated',
  'WebhookEndpointSecretRotated',
  'WebhookEndpointDisabled',
  'WebhookEndpointDeleted',
];

/**
 * Events of `walletAlert-{organizationId}.{environment}`: the low-balance threshold of one wallet.
 * `thresholdKobo: null` turns the alert off.
 */
export type LowBalanceThresholdSet = Event<'LowBalanceThresholdSet', { organizationId: string; environment: string; thresholdKobo: number | null }>;

export const WEBHOOK_CATEGORIES = { endpoint: 'webhookEndpoint', walletAlert: 'walletAlert' } as const;
export const webhookStreams = {
  endpoint: (endpointId: string) => `${WEBHOOK_CATEGORIES.endpoint}-${endpointId}`,
  walletAlert: (organizationId: string, environment: string) => `${WEBHOOK_CATEGORIES.walletAlert}-${organizationId}.${environment}`,
} as const;
