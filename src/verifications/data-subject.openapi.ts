import { NULLABLE_TIMESTAMP, ORGANIZATION_ID, ENVIRONMENT, ref, TIMESTAMP, type Schema } from '../common/openapi.js';
import { HOLD_REASONS } from './data-subject.events.js';

const ACTOR: Schema = {
  type: 'object',
  required: ['type', 'id'],
  description: 'who: an API key (its id), a console user (its id), an operator or the service; never a name or an email',
  properties: { type: { type: 'string', enum: ['api_key', 'user', 'operator', 'system'] }, id: { type: 'string' } },
};
const MASKED_SUBJECT: Schema = {
  type: 'object',
  required: ['kind', 'maskedIdentifier'],
  description: "the identifier's kind and its last 3 characters; never the identifier",
  properties: { kind: { type: 'string' }, maskedIdentifier: { type: 'string', pattern: '^\\*\\*\\*.{0,3}$', example: '***976' } },
};
const HOLD_ID: Schema = { type: 'string', pattern: '^hld_[0-9A-HJKMNP-TV-Z]{26}$', example: 'hld_01JD3Q9ZK8W6V2C4X7N5B0M1TR' };
const REQUEST_ID: Schema = { type: 'string', pattern: '^dsr_[0-9A-HJKMNP-TV-Z]{26}$', example: 'dsr_01JD3Q9ZK8W6V2C4X7N5B0M1TR' };

/** The schemas of holds, exports and the record of data-subject requests. */
export function dataSubjectSchemas(): Record<string, Schema> {
  const request: Schema = {
    type: 'object',
    required: ['id', 'type', 'environment', 'subject', 'references', 'pending', 'format', 'actor', 'at'],
    properties: {
      id: REQUEST_ID,
      type: { type: 'string', enum: ['export', 'erasure'] },
      environment: ENVIRONMENT,
      subject: { anyOf: [{ ...MASKED_SUBJECT }, { type: 'null' }], description: 'null for an erasure by reference' },
      references: { type: 'array', items: ref('Reference'), description: 'the verifications exported or erased' },
      pending: { type: 'array', items: ref('Reference'), description: "an erasure's checks still running, not erased" },
      format: { type: ['string', 'null'], enum: ['json', 'zip', null] },
      actor: ACTOR,
      at: TIMESTAMP,
    },
  };
  const hold: Schema = {
    type: 'object',
    required: ['id', 'environment', 'reference', 'subject', 'reason', 'until', 'inForce', 'placedAt', 'placedBy', 'liftedAt', 'liftedBy'],
    properties: {
      id: HOLD_ID,
      environment: ENVIRONMENT,
      reference: { anyOf: [ref('Reference'), { type: 'null' }], description: 'the check held, or null for a subject' },
      subject: { anyOf: [{ ...MASKED_SUBJECT }, { type: 'null' }], description: 'the subject held, or null for a check' },
      reason: { type: 'string', enum: [...HOLD_REASONS] },
      until: NULLABLE_TIMESTAMP,
      inForce: { type: 'boolean', description: 'not lifted and not past `until`: erasure and retention are stopped' },
      placedAt: TIMESTAMP,
      placedBy: ACTOR,
      liftedAt: NULLABLE_TIMESTAMP,
      liftedBy: { anyOf: [{ ...ACTOR }, { type: 'null' }] },
    },
  };
  const holdInput: Schema = {
    type: 'object',
    required: ['reason'],
    additionalProperties: false,
    description: 'exactly one of `reference` and `subject`',
    properties: {
      reference: ref('Reference'),
      subject: ref('DataSubject'),
      reason: { type: 'string', enum: [...HOLD_REASONS], description: 'a code, so that no free text (which could carry personal data) is kept' },
      until: { ...NULLABLE_TIMESTAMP, description: 'when the hold ends (at most 3,660 days ahead); absent or null: until lifted' },
    },
  };
  return {
    HoldInput: holdInput,
    AdminHoldInput: { ...holdInput, required: ['environment', 'reason'], properties: { environment: ENVIRONMENT, ...(holdInput.properties as object) } },
    Hold: hold,
    OperatorHold: { ...hold, required: [...(hold.required as string[]), 'organizationId'], properties: { ...(hold.properties as object), organizationId: ORGANIZATION_ID } },
    DataSubjectRequest: request,
    OperatorDataSubjectRequest: {
      ...request,
      required: [...(request.required as string[]), 'organizationId'],
      properties: { ...(request.properties as object), organizationId: ORGANIZATION_ID },
    },
    SubjectExport: {
      type: 'object',
      required: ['exportId', 'exportedAt', 'subject', 'verifications', 'holds', 'requests'],
      properties: {
        exportId: REQUEST_ID,
        exportedAt: TIMESTAMP,
        subject: MASKED_SUBJECT,
        verifications: { type: 'array', maxItems: 500, items: ref('Verification'), description: 'each as GET answers it: request, result, portrait link' },
        portraitFiles: {
          type: 'array',
          description: 'in the ZIP only: the portrait files beside export.json',
          items: {
            type: 'object',
            required: ['reference', 'file', 'contentType'],
            properties: { reference: ref('Reference'), file: { type: 'string' }, contentType: { type: 'string', enum: ['image/jpeg', 'image/png'] } },
          },
        },
        holds: { type: 'array', items: ref('Hold'), description: 'holds on the subject or its checks, lifted ones included' },
        requests: { type: 'array', items: ref('DataSubjectRequest'), description: 'earlier exports and erasures of the subject' },
      },
    },
  };
}
