import { FAILURE_REASONS } from './failure-reason.js';
import {
  ANY_ROUTE_ERRORS,
  BODY_ERRORS,
  errorResponses,
  KEY_ERRORS,
  KOBO,
  NULLABLE_TIMESTAMP,
  okEnvelope,
  ORGANIZATION_STATE_ERRORS,
  ref,
  TIMESTAMP,
  type Schema,
  type Tag,
} from '../common/openapi.js';
import type { InputFormat } from '../scopes/input-formats.js';
import type { ResultField } from '../scopes/scope-results.js';
import { COUNTRY_CODE, SCOPE_CATEGORY, scopeDefinition, SCOPES, type Scope } from '../scopes/scopes.js';
import { SUBJECT_KINDS } from '../data-protection/blind-index.js';
import { scopeExample, SUBJECT_BANK_FORMAT, SUBJECT_FORMATS } from './verification-inputs.js';

/**
 * The OpenAPI side of verifications: one operation per scope (`POST /v1/nin`, …), all from the
 * scope's definition (src/scopes/registry/): its input schema from the same rules and regexes that
 * validate it, its result schema from its result fields.
 */

/** `premium_bank_account` -> `PremiumBankAccount`. */
export function scopeSchemaName(scope: Scope): string {
  return scope.replace(/(^|_)([a-z])/g, (_match, _sep: string, letter: string) => letter.toUpperCase());
}

function inputProperty(format: InputFormat): Schema {
  return format.regex === undefined
    ? { type: 'string', minLength: 1, description: format.description, example: format.example }
    : { type: 'string', pattern: format.regex.source, description: format.description, example: format.example };
}

function inputSchema(scope: Scope): Schema {
  const { inputs: rules, across } = scopeDefinition(scope);
  const properties = Object.fromEntries(Object.entries(rules).map(([field, rule]) => [field, inputProperty(rule.format)]));
  const required = Object.entries(rules)
    .filter(([, rule]) => rule.required)
    .map(([field]) => field);
  const schema: Schema = { type: 'object', required, properties, additionalProperties: false };
  return across === undefined ? schema : { ...schema, ...across.schema };
}

/** The inputs as recorded: an image is reduced to what identifies it. Empty once the personal data is erased. */
function requestEchoSchema(scope: Scope): Schema {
  const properties: Record<string, Schema> = {};
  for (const [field, rule] of Object.entries(scopeDefinition(scope).inputs)) {
    properties[field] = rule.format.echo?.schema ?? inputProperty(rule.format);
  }
  return { type: 'object', properties, description: 'the inputs as submitted ({} once the personal data is erased)' };
}

function resultProperty(field: ResultField): Schema {
  const described = (schema: Schema): Schema => (field.description === undefined ? schema : { ...schema, description: field.description });
  switch (field.kind) {
    case 'text':
      return described({ type: 'string' });
    case 'date':
      return described({ type: 'string', format: 'date', example: '1993-06-10' });
    case 'gender':
      return described({ type: 'string', description: '`Male` or `Female`; another value as the register holds it', example: 'Female' });
    case 'phone':
      return described({ type: 'string', description: 'a Nigerian number in the local form 080XXXXXXXX; others as the register holds them', example: '08150292236' });
    case 'boolean':
      return described({ type: 'boolean' });
    case 'percent':
      return described({ type: 'number', minimum: 0, maximum: 100 });
    case 'url':
      return described({ type: 'string', format: 'uri' });
    case 'timestamp':
      return described(TIMESTAMP);
    default: {
      const _exhaustive: never = field.kind;
      throw new Error(`invariant: unknown result field kind ${String(_exhaustive)}`);
    }
  }
}

function resultSchema(scope: Scope): Schema {
  return {
    type: 'object',
    description: `The record found; every field may be absent (providers differ), and it is {} when nothing was found or the personal data was erased. Read it by key.`,
    properties: Object.fromEntries(Object.entries(scopeDefinition(scope).results).map(([field, spec]) => [field, resultProperty(spec)])),
  };
}

const STATUS: Schema = {
  type: 'string',
  enum: ['found', 'not_found', 'failed', 'pending'],
  description: 'found and not_found are charged; failed is not; pending only while the check is still running',
};

function verificationSchema(scope: Scope): Schema {
  const name = scopeSchemaName(scope);
  return {
    type: 'object',
    description: `A ${scope} verification`,
    required: [
      'reference',
      'scope',
      'category',
      'countryCode',
      'status',
      'request',
      'result',
      'errorMessage',
      'failureReason',
      'priceKobo',
      'charged',
      'createdAt',
      'personalDataErasedAt',
    ],
    properties: {
      reference: ref('Reference'),
      scope: { type: 'string', const: scope },
      category: { type: 'string', const: SCOPE_CATEGORY },
      countryCode: { type: 'string', const: COUNTRY_CODE },
      status: STATUS,
      request: requestEchoSchema(scope),
      result: ref(`${name}Result`),
      errorMessage: { type: ['string', 'null'], description: 'why the check failed; null otherwise' },
      failureReason: {
        type: ['string', 'null'],
        enum: [...FAILURE_REASONS, null],
        description:
          'why a failed check failed, null unless status is failed: provider_timeout (no answer in time), provider_unavailable (unreachable, down, or its circuit breaker open), provider_error (any other provider failure), insufficient_balance (refused with 402), internal_error (the service could not finish the check)',
      },
      priceKobo: { ...KOBO, description: 'the price of the check, in kobo' },
      charged: { type: 'boolean', description: 'true exactly for found and not_found' },
      createdAt: { ...TIMESTAMP, description: 'when the check ran' },
      personalDataErasedAt: { ...NULLABLE_TIMESTAMP, description: 'when request and result were erased; null while they are readable' },
    },
  };
}

/** Component schemas of the verification routes. */
export function verificationSchemas(): Record<string, Schema> {
  const schemas: Record<string, Schema> = {};
  for (const scope of SCOPES) {
    const name = scopeSchemaName(scope);
    schemas[`${name}Input`] = inputSchema(scope);
    schemas[`${name}Result`] = resultSchema(scope);
    schemas[`${name}Verification`] = verificationSchema(scope);
  }
  const mapping = Object.fromEntries(SCOPES.map((scope) => [scope, `#/components/schemas/${scopeSchemaName(scope)}Verification`]));
  schemas.Verification = {
    description: 'A verification of any scope: `scope` says which',
    oneOf: SCOPES.map((scope) => ref(`${scopeSchemaName(scope)}Verification`)),
    discriminator: { propertyName: 'scope', mapping },
  };
  schemas.VerificationSummary = {
    type: 'object',
    required: ['reference', 'scope', 'status', 'priceKobo', 'charged', 'createdAt'],
    properties: { reference: ref('Reference'), scope: { type: 'string', enum: [...SCOPES] }, status: STATUS, priceKobo: KOBO, charged: { type: 'boolean' }, createdAt: TIMESTAMP },
  };
  schemas.DataSubject = {
    type: 'object',
    description:
      'exactly one identifier, valid as for the checks; a phone number in any of its forms finds all of them. An account number is found with its bank (`bank`, by code or name): the same number at another bank is another subject. Without `bank` it finds the checks that named no bank (premium_bank_account without one, where the result named none either)',
    minProperties: 1,
    maxProperties: 2,
    properties: {
      ...Object.fromEntries(SUBJECT_KINDS.map((kind) => [kind, inputProperty(SUBJECT_FORMATS[kind])])),
      bank: { ...inputProperty(SUBJECT_BANK_FORMAT), description: 'the bank of `account_number`, only with it' },
    },
    dependentRequired: { bank: ['account_number'] },
    additionalProperties: false,
  };
  schemas.SubjectReferences = {
    type: 'object',
    required: ['references'],
    properties: { references: { type: 'array', maxItems: 500, items: ref('Reference'), description: 'at most 500 per call' } },
  };
  schemas.SubjectErasure = {
    type: 'object',
    required: ['references', 'pending'],
    properties: {
      references: {
        type: 'array',
        maxItems: 500,
        items: ref('Reference'),
        description: 'the verifications erased (now, or before and still found); at most 500 per call: call again until empty',
      },
      pending: { type: 'array', items: ref('Reference'), description: 'verifications of the subject still running, not erased: erase them once finished' },
    },
  };
  return schemas;
}

/** The errors of a check beyond the key's: money, scope access, the provider. */
const RUN_ERRORS = [
  'insufficient_balance',
  'scope_not_active',
  'scope_not_allowed',
  'provider_not_configured',
  'scope_not_supported_by_provider',
  'personal_data_destroyed',
  'provider_failed',
] as const;

/**
 * `POST /v1/{scope}` as one operation per scope. The route itself is one (`:scope` in the
 * controller, left out of the document); these path items take its place.
 */
export function scopeOperations(): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const scope of SCOPES) {
    const name = scopeSchemaName(scope);
    const title = scopeDefinition(scope);
    paths[`/v1/${scope}`] = {
      post: {
        operationId: `verify${name}`,
        tags: ['Verifications' satisfies Tag],
        summary: title.summary,
        description: `${title.description} Every call is a new, billed check with a new reference (found and not_found are charged; a failed check is not). Unknown fields are refused. Test keys run on the sandbox, where the last digit of the main input decides the outcome (1 not_found, 2 provider failure, 3 provider timeout${title.sandbox.noMatchOnFour === true ? ', 4 no match' : ''}, else found).`,
        security: [{ serviceKey: [] }],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref(`${name}Input`), examples: { found: { summary: 'found on the sandbox', value: scopeExample(scope) } } } },
        },
        responses: {
          '201': { description: 'The check ran: found or not_found, charged', content: { 'application/json': { schema: okEnvelope(ref(`${name}Verification`)) } } },
          ...errorResponses(ANY_ROUTE_ERRORS, BODY_ERRORS, KEY_ERRORS, ORGANIZATION_STATE_ERRORS, RUN_ERRORS),
        },
      },
    };
  }
  return paths;
}
