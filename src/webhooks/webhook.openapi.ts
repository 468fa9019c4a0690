import { ENVIRONMENT, KOBO, NULLABLE_TIMESTAMP, TIMESTAMP, type Schema } from '../common/openapi.js';
import { MAX_ROTATION_OVERLAP_SECONDS } from './webhook-endpoint.decider.js';
import { WEBHOOK_EVENT_TYPES } from './webhook.events.js';

export const ENDPOINT_ID_SCHEMA: Schema = { type: 'string', pattern: '^whe_[0-9A-HJKMNP-TV-Z]{26}$', example: 'whe_01JD3Q9ZK8W6V2C4X7N5B0M1TR' };
export const DELIVERY_ID_SCHEMA: Schema = { type: 'string', pattern: '^[0-9]{1,18}$', example: '42' };
const EVENT_TYPES: Schema = {
  type: 'array',
  maxItems: 50,
  items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
  description: 'the event types sent to it; empty: every type',
};
const URL: Schema = {
  type: 'string',
  maxLength: 2_000,
  example: 'https://hooks.acme.example/ledger',
  description: 'https (plain http only where private targets are allowed); no user name, password or fragment',
};
const DESCRIPTION: Schema = { type: ['string', 'null'], maxLength: 500, example: 'production receiver' };
const ENDPOINT_PROPERTIES = {
  id: ENDPOINT_ID_SCHEMA,
  url: URL,
  eventTypes: EVENT_TYPES,
  description: DESCRIPTION,
  enabled: { type: 'boolean', description: 'false: nothing is sent (turned off by its owner, or by the service after days of failures)' },
  environment: ENVIRONMENT,
  createdAt: TIMESTAMP,
};
const SECRET: Schema = {
  type: 'string',
  pattern: '^whsec_[A-Za-z0-9+/=]{44}$',
  description: 'the signing secret (Standard Webhooks), shown once',
  example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw9+VtdLWsnks=',
};

/** The OpenAPI schemas of the webhook routes. */
export function webhookSchemas(): Record<string, Schema> {
  return {
    WebhookEndpoint: { type: 'object', required: Object.keys(ENDPOINT_PROPERTIES), properties: ENDPOINT_PROPERTIES },
    CreatedWebhookEndpoint: { type: 'object', required: [...Object.keys(ENDPOINT_PROPERTIES), 'secret'], properties: { ...ENDPOINT_PROPERTIES, secret: SECRET } },
    WebhookEndpointInput: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: { url: URL, eventTypes: EVENT_TYPES, description: DESCRIPTION, enabled: { type: 'boolean', default: true } },
    },
    AdminWebhookEndpointInput: {
      type: 'object',
      additionalProperties: false,
      required: ['environment', 'url'],
      properties: { environment: ENVIRONMENT, url: URL, eventTypes: EVENT_TYPES, description: DESCRIPTION, enabled: { type: 'boolean', default: true } },
    },
    WebhookEndpointChange: {
      type: 'object',
      additionalProperties: false,
      properties: { url: URL, eventTypes: EVENT_TYPES, description: DESCRIPTION, enabled: { type: 'boolean' } },
    },
    WebhookSecretRotation: {
      type: 'object',
      additionalProperties: false,
      properties: {
        overlapSeconds: {
          type: 'integer',
          minimum: 0,
          maximum: MAX_ROTATION_OVERLAP_SECONDS,
          default: 86_400,
          description: 'how long the previous secret keeps signing beside the new one',
        },
      },
    },
    WebhookSecret: { type: 'object', required: ['secret'], properties: { secret: SECRET } },
    DeletedWebhookEndpoint: { type: 'object', required: ['id', 'deleted'], properties: { id: ENDPOINT_ID_SCHEMA, deleted: { const: true } } },
    WebhookAttempt: {
      type: 'object',
      required: ['attempt', 'attemptedAt', 'latencyMs', 'statusCode', 'outcome', 'errorCode', 'responseExcerpt'],
      properties: {
        attempt: { type: 'integer', minimum: 1 },
        attemptedAt: TIMESTAMP,
        latencyMs: { type: 'integer', minimum: 0 },
        statusCode: { type: ['integer', 'null'], description: "the receiver's HTTP status; null when it did not answer" },
        outcome: { type: 'string', enum: ['succeeded', 'failed'], description: 'succeeded: a 2xx answer' },
        errorCode: {
          type: ['string', 'null'],
          enum: ['invalid_url', 'plain_http_refused', 'target_refused', 'dns_failed', 'timeout', 'connection_failed', null],
          description: 'why no answer came; target_refused: the URL resolves to a loopback, private, link-local or metadata address',
        },
        responseExcerpt: { type: ['string', 'null'], maxLength: 1_024, description: "the first 1 KiB of the receiver's answer" },
      },
    },
    WebhookDelivery: {
      type: 'object',
      required: ['id', 'webhookId', 'eventType', 'status', 'createdAt', 'nextAttemptAt', 'finishedAt', 'attempts'],
      properties: {
        id: DELIVERY_ID_SCHEMA,
        webhookId: {
          type: 'string',
          description: 'the webhook-id header: msg_ and the id of the event announced; the same on every attempt and endpoint',
          example: 'msg_0193a1b2-0000-7000-8000-000000000001',
        },
        eventType: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
        status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
        createdAt: TIMESTAMP,
        nextAttemptAt: NULLABLE_TIMESTAMP,
        finishedAt: NULLABLE_TIMESTAMP,
        attempts: { type: 'array', items: { $ref: '#/components/schemas/WebhookAttempt' } },
      },
    },
    WebhookResendRange: {
      type: 'object',
      additionalProperties: false,
      required: ['from', 'to'],
      properties: { from: TIMESTAMP, to: TIMESTAMP },
    },
    WebhookResent: { type: 'object', required: ['resent'], properties: { resent: { type: 'integer', minimum: 0, description: 'deliveries set going again' } } },
    LowBalanceThreshold: {
      type: 'object',
      required: ['environment', 'thresholdKobo'],
      properties: {
        environment: ENVIRONMENT,
        thresholdKobo: { ...KOBO, type: ['integer', 'null'], description: 'below this balance (kobo) wallet.low_balance fires once per crossing; null: off' },
      },
    },
    LowBalanceThresholdInput: {
      type: 'object',
      additionalProperties: false,
      required: ['thresholdKobo'],
      properties: { thresholdKobo: { ...KOBO, type: ['integer', 'null'] } },
    },
  };
}
