import { ENVIRONMENT, NULLABLE_TIMESTAMP, ORGANIZATION_ID, TIMESTAMP, type Schema } from '../common/openapi.js';
import { MAX_REQUESTS_PER_MINUTE, MAX_RETENTION_DAYS } from '../config/config.js';
import { CREDENTIAL_FIELDS, PROVIDER_NAMES } from '../providers/capabilities.js';
import { MAX_PRICE_KOBO, SCOPES } from '../scopes/scopes.js';
import { KEY_ID } from './organization.store.js';

/** The OpenAPI schemas of the operators' organization and key routes. */

const SCOPE: Schema = { type: 'string', enum: [...SCOPES] };
const CREDENTIALS: Schema = {
  type: 'object',
  description: `the provider's credentials: ${Object.entries(CREDENTIAL_FIELDS)
    .map(([provider, fields]) => `${provider} ${fields.length === 0 ? 'none' : `{${fields.join(', ')}}`}`)
    .join('; ')}. Stored encrypted; never shown again.`,
  additionalProperties: { type: 'string', minLength: 1, maxLength: 500 },
};
const KEY_ID_SCHEMA: Schema = { type: 'string', pattern: KEY_ID.source, example: 'key_01JD3Q9ZK8W6V2C4X7N5B0M1TR' };
const KEY_SCOPES: Schema = {
  type: ['array', 'null'],
  items: SCOPE,
  description: 'the scopes the key may run; null: every scope active for the organization',
};

const NAME = { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S', description: 'not blank' } as const;

export function organizationSchemas(): Record<string, Schema> {
  const keyFields = {
    id: KEY_ID_SCHEMA,
    name: { type: ['string', 'null'], maxLength: 100 },
    prefix: { type: 'string', pattern: '^service_(test|live)_', description: 'the start of the key: its environment and first characters' },
    last4: { type: 'string', minLength: 4, maxLength: 4, description: 'the last four characters of the key' },
    environment: ENVIRONMENT,
    scopes: KEY_SCOPES,
    createdAt: TIMESTAMP,
  };
  return {
    Organization: {
      type: 'object',
      required: [
        'id',
        'name',
        'email',
        'status',
        'approved',
        'activeScopes',
        'prices',
        'rateLimitPerMinute',
        'suspensionReason',
        'providers',
        'retentionDays',
        'personalDataDestroyedAt',
        'createdAt',
      ],
      properties: {
        id: ORGANIZATION_ID,
        name: { type: 'string' },
        email: { type: 'string' },
        status: { type: 'string', enum: ['pending', 'approved', 'suspended'], description: 'pending until approved; suspended refuses every key' },
        approved: { type: 'boolean', description: 'whether it was ever approved (a suspended organization keeps it)' },
        activeScopes: { type: 'array', items: SCOPE },
        prices: {
          type: 'object',
          description: 'per-scope price overrides in kobo; scopes left out cost the configured default',
          propertyNames: SCOPE,
          additionalProperties: { type: 'integer', minimum: 0, maximum: MAX_PRICE_KOBO },
        },
        rateLimitPerMinute: { type: ['integer', 'null'], minimum: 1, description: 'requests per key per minute on /v1; null: RATE_LIMIT_PER_MINUTE' },
        suspensionReason: { type: ['string', 'null'] },
        providers: {
          type: 'object',
          description: 'the upstream per environment and its fallback; never the credentials. Empty until an operator configures one.',
          propertyNames: ENVIRONMENT,
          additionalProperties: {
            type: 'object',
            required: ['provider', 'fallback'],
            properties: { provider: { type: 'string', enum: [...PROVIDER_NAMES] }, fallback: { type: ['string', 'null'], enum: [...PROVIDER_NAMES, null] } },
          },
        },
        retentionDays: { type: ['integer', 'null'], minimum: 1, description: 'days the personal data of its checks is kept; null: PERSONAL_DATA_RETENTION_DAYS' },
        personalDataDestroyedAt: { ...NULLABLE_TIMESTAMP, description: 'when its personal data was destroyed (offboarding); null while it stands' },
        createdAt: TIMESTAMP,
      },
    },
    ApiKey: {
      type: 'object',
      description: 'A key as listed: never the key itself',
      required: ['id', 'name', 'prefix', 'last4', 'environment', 'scopes', 'createdAt', 'lastUsedAt', 'revokedAt'],
      properties: { ...keyFields, lastUsedAt: NULLABLE_TIMESTAMP, revokedAt: NULLABLE_TIMESTAMP },
    },
    IssuedApiKey: {
      type: 'object',
      description: 'The one answer that carries the full key: keep it, it cannot be shown again',
      required: ['id', 'key', 'name', 'prefix', 'last4', 'environment', 'scopes', 'createdAt'],
      properties: { ...keyFields, key: { type: 'string', pattern: '^service_(test|live)_[A-Za-z0-9_-]{43}$', description: 'the key, shown this once' } },
    },
    NewOrganization: {
      type: 'object',
      required: ['name', 'email'],
      additionalProperties: false,
      properties: { name: NAME, email: { type: 'string', format: 'email', maxLength: 254 } },
    },
    OrganizationName: {
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: { name: { ...NAME, description: 'not blank; surrounding spaces are dropped' } },
    },
    Suspension: {
      type: 'object',
      required: ['reason'],
      additionalProperties: false,
      properties: { reason: { type: 'string', minLength: 1, maxLength: 500, pattern: '\\S', description: 'why; shown to operators' } },
    },
    ScopeSet: {
      type: 'object',
      required: ['scopes'],
      additionalProperties: false,
      properties: { scopes: { type: 'array', items: SCOPE, maxItems: SCOPES.length * 2, description: 'the full set of active scopes; [] deactivates all' } },
    },
    Prices: {
      type: 'object',
      description: 'the full set of price overrides in kobo; scopes left out return to the default price',
      maxProperties: SCOPES.length,
      propertyNames: SCOPE,
      additionalProperties: { type: 'integer', minimum: 0, maximum: MAX_PRICE_KOBO },
    },
    ProviderConfiguration: {
      type: 'object',
      required: ['environment', 'provider'],
      additionalProperties: false,
      properties: {
        environment: { ...ENVIRONMENT, description: 'test accepts only the sandbox, without a fallback' },
        provider: { type: 'string', enum: [...PROVIDER_NAMES] },
        credentials: CREDENTIALS,
        fallback: {
          type: ['object', 'null'],
          description: 'a second upstream, tried when the first fails: another one, not the sandbox',
          required: ['provider'],
          additionalProperties: false,
          properties: { provider: { type: 'string', enum: [...PROVIDER_NAMES] }, credentials: CREDENTIALS },
        },
      },
    },
    RateLimit: {
      type: 'object',
      required: ['requestsPerMinute'],
      additionalProperties: false,
      properties: { requestsPerMinute: { type: ['integer', 'null'], minimum: 1, maximum: MAX_REQUESTS_PER_MINUTE, description: 'per key; null returns to RATE_LIMIT_PER_MINUTE' } },
    },
    Retention: {
      type: 'object',
      required: ['retentionDays'],
      additionalProperties: false,
      properties: { retentionDays: { type: ['integer', 'null'], minimum: 1, maximum: MAX_RETENTION_DAYS, description: 'null returns to PERSONAL_DATA_RETENTION_DAYS' } },
    },
    NewApiKey: {
      type: 'object',
      required: ['environment'],
      additionalProperties: false,
      properties: {
        environment: ENVIRONMENT,
        name: { type: 'string', minLength: 1, maxLength: 100 },
        scopes: {
          type: 'array',
          items: SCOPE,
          minItems: 1,
          maxItems: SCOPES.length * 2,
          description: 'the scopes the key may run; left out: every scope active for the organization',
        },
      },
    },
  };
}

export { KEY_ID_SCHEMA };
