import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiParam, ApiQuery, ApiResponse } from '@nestjs/swagger';

/**
 * What the OpenAPI document says of every route: the error envelope and the code catalogue, the
 * success envelope, paging and the decorators that put them on a route. Schemas are plain JSON
 * Schema (OpenAPI 3.1's dialect); each feature names its own in a `*.openapi.ts` file and the
 * wiring (src/openapi.ts) puts them all under `components.schemas`.
 */

/** A JSON Schema object as OpenAPI 3.1 takes it. */
export type Schema = { readonly [keyword: string]: unknown };

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** ISO 8601 instants as the service writes them: always with the `+00:00` offset. */
export const TIMESTAMP: Schema = { type: 'string', format: 'date-time', example: '2026-11-22T07:15:00.123+00:00' };
export const NULLABLE_TIMESTAMP: Schema = { type: ['string', 'null'], format: 'date-time', example: null };
export const KOBO: Schema = { type: 'integer', minimum: 0, description: 'kobo (₦1 = 100 kobo)', example: 10_000 };

/** The success envelope: `{status: true, data, meta?}`; `meta` on lists only. */
export function okEnvelope(data: Schema, meta?: Schema): Schema {
  return {
    type: 'object',
    required: meta === undefined ? ['status', 'data'] : ['status', 'data', 'meta'],
    properties: meta === undefined ? { status: { const: true }, data } : { status: { const: true }, data, meta },
  };
}

interface ErrorCodeSpec {
  readonly status: number;
  /** What the code means, for the response's description. */
  readonly when: string;
  /** The `details` of this code; an empty object when not given. */
  readonly details?: Schema;
}

const FIELD_ERRORS: Schema = {
  type: 'object',
  required: ['fields'],
  properties: { fields: { type: 'array', items: ref('FieldError'), description: 'every field error at once (at most 50); never the values' } },
};

/**
 * Every error code an answer can carry, with its HTTP status: the one list the document's error
 * responses are made from. docs/api.md explains each in prose.
 */
export const ERROR_CODES = {
  bad_request: { status: 400, when: 'malformed JSON, an empty JSON body, an unparsable request line or URL' },
  unauthenticated: { status: 401, when: 'the key or bearer token is missing, unknown, revoked or malformed' },
  insufficient_balance: {
    status: 402,
    when: "the wallet's available balance is below the price; the verification is recorded as failed and not charged",
    details: {
      type: 'object',
      required: ['reference', 'priceKobo', 'balanceKobo'],
      properties: { reference: ref('Reference'), priceKobo: KOBO, balanceKobo: { type: 'integer', description: 'the available balance, in kobo' } },
    },
  },
  scope_not_active: { status: 403, when: 'the scope is not active for the organization' },
  scope_not_allowed: { status: 403, when: 'the key was issued for other scopes' },
  organization_not_approved: { status: 403, when: 'a live key of an organization not yet approved' },
  organization_suspended: { status: 403, when: 'a key of a suspended organization' },
  provider_not_configured: {
    status: 403,
    when: 'a live key, and no live upstream provider configured',
    details: { type: 'object', required: ['missing'], properties: { missing: { type: 'string', example: 'providers.live' } } },
  },
  scope_not_supported_by_provider: {
    status: 403,
    when: 'the configured upstream cannot run this scope',
    details: {
      type: 'object',
      required: ['provider', 'supportedScopes'],
      properties: { provider: { type: 'string' }, supportedScopes: { type: 'array', items: { type: 'string' } } },
    },
  },
  personal_data_destroyed: { status: 403, when: "the organization's personal data was destroyed (offboarded): it can run no more checks" },
  portrait_link_expired: { status: 403, when: 'the portrait link is past its expiry: read the verification again for a fresh one' },
  portrait_link_invalid: { status: 403, when: 'the portrait link was altered' },
  read_only: { status: 403, when: 'the auditor token on a change' },
  not_found: { status: 404, when: 'no such resource for the caller (another organization or environment included)' },
  request_timeout: { status: 408, when: 'the request was not received in time' },
  conflict: { status: 409, when: 'the organization changed concurrently too many times in a row, or its key limit (200) is reached' },
  verification_pending: { status: 409, when: 'the check is still running: erase it once it has finished' },
  session_closed: { status: 409, when: 'the verification session is submitted, decided, expired or cancelled: nothing more is accepted on it' },
  session_not_in_review: { status: 409, when: 'only a verification session in review (needs_review) can be approved or declined by a person' },
  legal_hold: {
    status: 409,
    when: 'a hold on the check or its data subject stops the erasure until lifted; nothing is erased',
    details: {
      type: 'object',
      required: ['holdId', 'reason', 'until'],
      properties: { holdId: { type: 'string' }, reason: { type: 'string', description: "the hold's reason code" }, until: NULLABLE_TIMESTAMP },
    },
  },
  funding_reference_conflict: {
    status: 409,
    when: 'the funding reference already credited the wallet with another amount; nothing is credited',
    details: {
      type: 'object',
      required: ['reference', 'existingAmountKobo', 'requestedAmountKobo'],
      properties: { reference: { type: 'string' }, existingAmountKobo: KOBO, requestedAmountKobo: KOBO },
    },
  },
  top_up_not_resolvable: {
    status: 409,
    when: 'the top-up needs no resolution (credited, or already resolved), or the provider does not confirm it settled: nothing is credited',
  },
  payload_too_large: { status: 413, when: 'a body above 2 MiB' },
  uri_too_long: { status: 414, when: 'a URL above 2,048 characters or a path segment above 200' },
  unsupported_media_type: { status: 415, when: 'a body that is not `application/json`' },
  validation_failed: { status: 422, when: 'invalid input (body, path or query; at most 16 query parameters of at most 256 characters)', details: FIELD_ERRORS },
  rate_limited: {
    status: 429,
    when: "the key's requests this minute are used up; `Retry-After` gives the seconds to wait",
    details: {
      type: 'object',
      required: ['limitPerMinute', 'retryAfterSeconds'],
      properties: { limitPerMinute: { type: 'integer', minimum: 1 }, retryAfterSeconds: { type: 'integer', minimum: 0 } },
    },
  },
  headers_too_large: { status: 431, when: 'the request line and headers above 16 KiB' },
  internal_error: { status: 500, when: 'a bug: the answer says nothing more, the log has the rest' },
  provider_failed: {
    status: 502,
    when: 'the provider failed or timed out; the verification is recorded as failed and not charged',
    details: {
      type: 'object',
      required: ['reference'],
      properties: {
        reference: ref('Reference'),
        failureReason: {
          type: 'string',
          enum: ['provider_error', 'provider_timeout', 'provider_unavailable', 'internal_error'],
          description:
            'provider_error: the provider answered with an error; provider_timeout: it did not answer in time; provider_unavailable: it could not be reached, or its circuit breaker is open; internal_error: the service could not finish the check',
        },
      },
    },
  },
  service_unavailable: {
    status: 503,
    when: "PostgreSQL or the event store is unreachable, the service is shutting down, a wallet is too busy, or a read model did not show the key's own writes within 2 s: try again shortly. On a check, details carry its reference when one was made: not charged, or its outcome not known yet (GET it once settled)",
    details: { type: 'object', properties: { reference: ref('Reference') } },
  },
  change_not_in_force: {
    status: 503,
    when: "the operator's change is recorded, but the read models did not apply it within 2 s; it takes effect once they do, and repeating the command is safe",
    details: { type: 'object', required: ['position'], properties: { position: { type: 'string', description: 'the position of the change in the event log' } } },
  },
} as const satisfies Record<string, ErrorCodeSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

const EMPTY_DETAILS: Schema = { type: 'object', properties: {}, description: 'empty for this code' };

/** `insufficient_balance` -> `InsufficientBalanceError`: the component schema of one code's envelope. */
export function errorSchemaName(code: ErrorCode): string {
  return `${code.replace(/(^|_)([a-z])/g, (_match, _sep: string, letter: string) => letter.toUpperCase())}Error`;
}

/** The components every route refers to: one error envelope per code, the field error, paging meta and the reference. */
export function sharedSchemas(): Record<string, Schema> {
  const schemas: Record<string, Schema> = {
    Reference: {
      type: 'string',
      pattern: '^vrf_[0-9A-HJKMNP-TV-Z]{26}$',
      description: '`vrf_` + a 26-character ULID (sortable by creation time)',
      example: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR',
    },
    FieldError: {
      type: 'object',
      required: ['field', 'message'],
      properties: { field: { type: 'string', example: 'nin' }, message: { type: 'string', example: 'must be the 11-digit NIN' } },
    },
    PagingMeta: {
      type: 'object',
      required: ['total', 'page', 'pageSize', 'totalPages'],
      properties: {
        total: { type: 'integer', minimum: 0, description: 'items matching the filters' },
        page: { type: 'integer', minimum: 1 },
        pageSize: { type: 'integer', minimum: 1, maximum: 100 },
        totalPages: { type: 'integer', minimum: 0, description: 'request pages in order until page equals totalPages' },
      },
    },
  };
  for (const [code, spec] of Object.entries(ERROR_CODES) as [ErrorCode, ErrorCodeSpec][]) {
    schemas[errorSchemaName(code)] = {
      type: 'object',
      description: `${spec.status} \`${code}\`: ${spec.when}`,
      required: ['status', 'error'],
      properties: {
        status: { const: false },
        error: {
          type: 'object',
          required: ['code', 'message', 'details'],
          properties: { code: { const: code }, message: { type: 'string', description: 'for people; never personal data' }, details: spec.details ?? EMPTY_DETAILS },
        },
      },
    };
  }
  return schemas;
}

/**
 * Errors any request can meet before its route runs (the query's limits included), or from the
 * stores. A path with a parameter can also be refused for a bad percent-encoding (400): the wiring
 * adds that to every such operation (src/openapi.ts).
 */
export const ANY_ROUTE_ERRORS: readonly ErrorCode[] = ['uri_too_long', 'validation_failed', 'headers_too_large', 'internal_error', 'service_unavailable'];
/** Errors of a request with a JSON body. */
export const BODY_ERRORS: readonly ErrorCode[] = ['bad_request', 'request_timeout', 'payload_too_large', 'unsupported_media_type'];
/** Errors of every `/v1` route that takes the key. */
export const KEY_ERRORS: readonly ErrorCode[] = ['unauthenticated', 'rate_limited'];
/** The key guard's refusals for the organization's state: live keys of an organization not approved, any key of a suspended one. */
export const ORGANIZATION_STATE_ERRORS: readonly ErrorCode[] = ['organization_not_approved', 'organization_suspended'];
/** Errors of every admin route (404 too: the admin API answers 404 when no admin token is configured). */
export const ADMIN_ERRORS: readonly ErrorCode[] = ['unauthenticated', 'not_found'];
/** Errors of every admin write: the auditor token may not. */
export const ADMIN_WRITE_ERRORS: readonly ErrorCode[] = [...ADMIN_ERRORS, 'read_only'];
/** Errors of an organization's changes: a write that may not be in force in time, or that meets concurrent changes. */
export const ORGANIZATION_CHANGE_ERRORS: readonly ErrorCode[] = [...ADMIN_WRITE_ERRORS, 'conflict', 'change_not_in_force'];

export interface ResponseObject {
  readonly description: string;
  readonly content: Record<string, { readonly schema: Schema }>;
}

/**
 * The error responses of a route, one per status, each naming its codes (duplicates dropped): the
 * envelope of the one code, or `anyOf` the envelopes of several (their `error.code` tells them apart).
 */
export function errorResponses(...groups: readonly (ErrorCode | readonly ErrorCode[])[]): Record<string, ResponseObject> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set<ErrorCode>(groups.flat())) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, ResponseObject> = {};
  for (const [status, codes] of [...byStatus.entries()].sort(([a], [b]) => a - b)) {
    const refs = codes.map((code) => ref(errorSchemaName(code)));
    const description = codes.map((code) => `\`${code}\`: ${ERROR_CODES[code].when}`).join('; ');
    responses[String(status)] = { description, content: { 'application/json': { schema: refs.length === 1 ? refs[0] : { anyOf: refs } } } };
  }
  return responses;
}

/** `components.responses`: the response of each code alone, which operations refer to rather than repeat. */
export function sharedResponses(): Record<string, ResponseObject> {
  return Object.fromEntries(
    (Object.keys(ERROR_CODES) as ErrorCode[]).map((code) => [errorSchemaName(code).replace(/Error$/, ''), errorResponses(code)[String(ERROR_CODES[code].status)]]),
  );
}

/** The error responses of a route (see errorResponses). */
export function ApiErrors(...groups: readonly (ErrorCode | readonly ErrorCode[])[]): MethodDecorator {
  return applyDecorators(...Object.entries(errorResponses(...groups)).map(([status, response]) => ApiResponse({ status: Number(status), ...response })));
}

/** A JSON success response in the envelope. */
export function ApiSuccess(status: number, description: string, data: Schema, meta?: Schema): MethodDecorator {
  return ApiResponse({ status, description, content: { 'application/json': { schema: okEnvelope(data, meta) } } });
}

/** The route's summary, operation id (the method name of generated clients) and tag. */
export function ApiRoute(operationId: string, tag: Tag, summary: string, description?: string): MethodDecorator {
  return ApiOperation({ operationId, tags: [tag], summary, ...(description === undefined ? {} : { description }) });
}

/** A JSON body with examples that pass validation (checked against the running service by the tests). */
export function ApiJsonBody(schema: Schema, examples: Record<string, { summary: string; value: unknown }>, description?: string): MethodDecorator {
  return ApiBody({ required: true, schema: schema as never, examples, ...(description === undefined ? {} : { description }) });
}

/** A path parameter. */
export function ApiPathParam(name: string, schema: Schema, description: string): MethodDecorator {
  return ApiParam({ name, required: true, description, schema: schema });
}

/** `page` and `pageSize` of a list: the admin lists' bounds (src/common/paging.ts) unless given. */
export function ApiPaging(maxPage = 1_000_000, maxPageSize = 1_000_000): MethodDecorator {
  return applyDecorators(
    ApiQuery({
      name: 'page',
      required: false,
      description: `from 1 (at most ${maxPage.toLocaleString('en')}); default 1`,
      schema: { type: 'integer', minimum: 1, maximum: maxPage, default: 1 },
    }),
    ApiQuery({
      name: 'pageSize',
      required: false,
      description: 'default 20; larger values than 100 are capped at 100',
      schema: { type: 'integer', minimum: 1, maximum: maxPageSize, default: 20 },
    }),
  );
}

/** The document's tags, in its order: the integrators' routes first, then the operators'. */
export const TAGS = [
  { name: 'Verifications', audience: 'integrator', description: 'Run a check of a scope, and read the checks run (X-Service-Key).' },
  { name: 'Wallet', audience: 'integrator', description: "The key's wallet: its balance and its ledger (X-Service-Key)." },
  { name: 'Data protection', audience: 'integrator', description: 'Erase the personal data of a verification or of a data subject (X-Service-Key).' },
  { name: 'Portraits', audience: 'integrator', description: 'Portrait images behind the signed links in verification results: the link is the credential.' },
  {
    name: 'Webhooks',
    audience: 'integrator',
    description: "The key's environment's webhook endpoints, their signing secrets, deliveries and attempts, and the wallet's low-balance alert (X-Service-Key).",
  },
  {
    name: 'Verification flows',
    audience: 'integrator',
    description: 'Flows (steps, decision rule, branding) and the sessions that take one person through a flow on the hosted page (X-Service-Key).',
  },
  { name: 'Health', audience: 'integrator', description: 'Reachability, without a key.' },
  { name: 'Admin: organizations', audience: 'operator', description: 'Register, approve, suspend and configure organizations (admin token; the auditor token reads).' },
  { name: 'Admin: API keys', audience: 'operator', description: "Issue, list and revoke an organization's keys (admin token; the auditor token reads)." },
  { name: 'Admin: wallets', audience: 'operator', description: 'Fund wallets and read their balances (admin token; the auditor token reads).' },
  { name: 'Admin: webhooks', audience: 'operator', description: "An organization's webhook endpoints, deliveries and low-balance alerts (admin token; the auditor token reads)." },
  {
    name: 'Admin: verification sessions',
    audience: 'operator',
    description: "Sessions in review: their evidence, and a person's decision (admin token; the auditor token reads).",
  },
  { name: 'Admin: audit', audience: 'operator', description: 'The finance audit: wallet histories replayed from the event log (admin or auditor token).' },
  { name: 'Operations', audience: 'operator', description: 'Readiness, metrics and projection status, for operators and their tooling.' },
] as const;

export type Tag = (typeof TAGS)[number]['name'];

export const ORGANIZATION_ID: Schema = { type: 'string', pattern: '^org_[0-9A-HJKMNP-TV-Z]{26}$', example: 'org_01JD3Q9ZK8W6V2C4X7N5B0M1TR' };
export const ENVIRONMENT: Schema = { type: 'string', enum: ['test', 'live'] };
