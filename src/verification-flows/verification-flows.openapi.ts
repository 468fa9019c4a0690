import { ENVIRONMENT, NULLABLE_TIMESTAMP, ref, TIMESTAMP, type Schema } from '../common/openapi.js';
import { REVIEW_REASONS } from './verification-session.decider.js';
import { SESSION_HISTORY_STEPS } from './verification-session.events.js';
import {
  DOCUMENT_KINDS,
  DOCUMENT_SIDES,
  IDENTITY_KINDS,
  LEGACY_DOCUMENT_KINDS,
  LIVENESS_RULES,
  MAX_SESSION_LIFETIME_SECONDS,
  MIN_SESSION_LIFETIME_SECONDS,
  STEP_TYPES,
} from './flow-definition.js';

export const FLOW_ID_SCHEMA: Schema = { type: 'string', pattern: '^vfl_[0-9A-HJKMNP-TV-Z]{26}$', example: 'vfl_01JD3Q9ZK8W6V2C4X7N5B0M1TR' };
export const SESSION_ID_SCHEMA: Schema = { type: 'string', pattern: '^vss_[0-9A-HJKMNP-TV-Z]{26}$', example: 'vss_01JD3Q9ZK8W6V2C4X7N5B0M1TR' };
const SESSION_STATUS: Schema = { type: 'string', enum: ['created', 'in_progress', 'submitted', 'approved', 'declined', 'needs_review', 'expired', 'cancelled'] };
const REFERENCE_OR_NULL: Schema = { type: ['string', 'null'], pattern: '^vrf_[0-9A-HJKMNP-TV-Z]{26}$', example: 'vrf_01JD3Q9ZK8W6V2C4X7N5B0M1TR' };
const URL_OR_NULL: Schema = { type: ['string', 'null'], maxLength: 500, example: 'https://acme.example/onboarding/done' };

const STEP: Schema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', enum: [...STEP_TYPES] },
    kinds: {
      type: 'array',
      minItems: 1,
      items: { type: 'string', enum: [...new Set<string>([...IDENTITY_KINDS, ...DOCUMENT_KINDS, ...Object.keys(LEGACY_DOCUMENT_KINDS)])] },
      description: 'identity_number: the numbers the person may give; documents: the documents the person may photograph (drivers_licence_front and _back read as drivers_licence)',
    },
  },
};
const DEFINITION_PROPERTIES = {
  name: { type: 'string', minLength: 1, maxLength: 100, example: 'Onboarding' },
  steps: {
    type: 'array',
    minItems: 1,
    maxItems: STEP_TYPES.length,
    items: STEP,
    description: 'in order: consent first, identity_number before selfie',
    example: [{ type: 'consent' }, { type: 'identity_number', kinds: ['nin', 'bvn'] }, { type: 'selfie' }],
  },
  decision: {
    type: 'object',
    properties: {
      faceMatchThreshold: { type: 'number', exclusiveMinimum: 0, maximum: 100, example: 80, description: "face_match's confidence (0 to 100) that approves; 80 when absent" },
      reviewMarginPoints: {
        type: 'number',
        minimum: 0,
        maximum: 100,
        example: 10,
        description: 'points below the threshold that go to review instead of declined; 10 when absent',
      },
      liveness: {
        type: 'string',
        enum: [...LIVENESS_RULES],
        example: 'required',
        description:
          'required: a selfie without an active step (head turn, blink) the server saw in its frames goes to review (liveness_not_shown), a chosen file included; required when absent in a flow with a selfie, else off; versions made before this rule read as off',
      },
    },
  },
  branding: {
    type: 'object',
    properties: {
      displayName: { type: 'string', maxLength: 100, example: 'Acme Bank' },
      colour: { type: 'string', pattern: '^#[0-9a-fA-F]{6}$', example: '#1c7ed6' },
      logoUrl: URL_OR_NULL,
    },
  },
  allowedOrigins: { type: 'array', maxItems: 10, items: { type: 'string', example: 'https://acme.example' }, description: 'origins whose pages may frame the hosted page' },
  redirectUrl: URL_OR_NULL,
  sessionLifetimeSeconds: { type: 'integer', minimum: MIN_SESSION_LIFETIME_SECONDS, maximum: MAX_SESSION_LIFETIME_SECONDS, example: 1_800, description: '1,800 when absent' },
};
const FLOW_PROPERTIES = {
  id: FLOW_ID_SCHEMA,
  version: { type: 'integer', minimum: 1 },
  environment: ENVIRONMENT,
  ...DEFINITION_PROPERTIES,
  createdAt: TIMESTAMP,
  updatedAt: TIMESTAMP,
};
const SESSION_PROPERTIES = {
  id: SESSION_ID_SCHEMA,
  environment: ENVIRONMENT,
  flowId: FLOW_ID_SCHEMA,
  flowVersion: { type: 'integer', minimum: 1, description: 'the flow version the session started with and keeps' },
  status: SESSION_STATUS,
  customerId: { type: ['string', 'null'], description: 'null once the personal data was erased' },
  metadata: { type: ['object', 'null'] },
  decision: {
    type: ['object', 'null'],
    required: ['reasons', 'faceMatchConfidence', 'review'],
    properties: {
      reasons: { type: 'array', items: { type: 'string', enum: ['identity_not_found', 'face_match_unavailable', 'face_match_close', 'face_mismatch', 'liveness_not_shown'] } },
      faceMatchConfidence: { type: ['number', 'null'] },
      review: {
        type: ['object', 'null'],
        description: "a person's decision of a session the rule sent to review: approved or declined, with a reason of a fixed list",
        required: ['decision', 'reason', 'reviewedBy', 'reviewedAt'],
        properties: {
          decision: { type: 'string', enum: ['approved', 'declined'] },
          reason: { type: 'string', enum: [...REVIEW_REASONS.approved, ...REVIEW_REASONS.declined] },
          reviewedBy: { type: 'string', enum: ['organization', 'operator'] },
          reviewedAt: TIMESTAMP,
        },
      },
    },
  },
  liveness: {
    type: ['string', 'null'],
    enum: ['head_turn', 'blink', null],
    description:
      'the active step the server saw across the frames the page sent with the latest selfie (frames of another face do not count); null for none (a chosen file, a still face)',
  },
  documents: {
    type: 'array',
    items: {
      type: 'object',
      required: ['document', 'side'],
      properties: { document: { type: 'string', enum: [...DOCUMENT_KINDS] }, side: { type: 'string', enum: [...new Set(Object.values(DOCUMENT_SIDES).flat())] } },
    },
    description: 'the document sides photographed and accepted by the server, each once',
  },
  verifications: {
    type: 'object',
    required: ['identity', 'faceMatch'],
    properties: { identity: REFERENCE_OR_NULL, faceMatch: REFERENCE_OR_NULL },
    description: 'the ordinary verifications the session ran',
  },
  expiresAt: TIMESTAMP,
  createdAt: TIMESTAMP,
  submittedAt: NULLABLE_TIMESTAMP,
  decidedAt: NULLABLE_TIMESTAMP,
  personalDataErasedAt: NULLABLE_TIMESTAMP,
};

/** The OpenAPI schemas of the verification flow and session routes. */
export function verificationFlowSchemas(): Record<string, Schema> {
  return {
    VerificationFlowInput: { type: 'object', required: ['name', 'steps'], properties: DEFINITION_PROPERTIES },
    VerificationFlow: { type: 'object', required: Object.keys(FLOW_PROPERTIES), properties: FLOW_PROPERTIES },
    VerificationFlowLink: {
      type: 'object',
      required: ['id', 'flowId', 'url', 'createdAt'],
      properties: {
        id: { type: 'string', pattern: '^vln_[0-9A-HJKMNP-TV-Z]{26}$', example: 'vln_01JD3Q9ZK8W6V2C4X7N5B0M1TR' },
        flowId: FLOW_ID_SCHEMA,
        url: { type: 'string', description: 'share it: each visit starts a session', example: 'https://ledger.example/verify/start/vln_01JD3Q9ZK8W6V2C4X7N5B0M1TR' },
        createdAt: TIMESTAMP,
      },
    },
    VerificationSessionInput: {
      type: 'object',
      required: ['flowId', 'customerId'],
      properties: {
        flowId: FLOW_ID_SCHEMA,
        customerId: { type: 'string', minLength: 1, maxLength: 100, example: 'cus_4821' },
        metadata: { type: ['object', 'null'], description: 'at most 2 KiB of JSON, sealed' },
      },
    },
    VerificationSession: { type: 'object', required: Object.keys(SESSION_PROPERTIES), properties: SESSION_PROPERTIES },
    VerificationSessionReviewInput: {
      type: 'object',
      required: ['decision', 'reason'],
      additionalProperties: false,
      description: 'A reason of the fixed list of the decision: no free text (it would invite personal data).',
      properties: {
        decision: { type: 'string', enum: ['approved', 'declined'] },
        reason: {
          type: 'string',
          enum: [...REVIEW_REASONS.approved, ...REVIEW_REASONS.declined],
          description: `approved: ${REVIEW_REASONS.approved.join(', ')}; declined: ${REVIEW_REASONS.declined.join(', ')}`,
        },
      },
    },
    VerificationSessionInReview: {
      type: 'object',
      required: ['id', 'organizationId', 'environment', 'flowId', 'reasons', 'faceMatchConfidence', 'decidedAt'],
      properties: {
        id: SESSION_ID_SCHEMA,
        organizationId: { type: 'string' },
        environment: ENVIRONMENT,
        flowId: FLOW_ID_SCHEMA,
        reasons: { type: 'array', items: { type: 'string' } },
        faceMatchConfidence: { type: ['number', 'null'] },
        decidedAt: TIMESTAMP,
      },
    },
    VerificationSessionReview: {
      type: 'object',
      required: ['session', 'organizationId', 'identityKind', 'history', 'selfie', 'portraitUrl', 'reviewReasons'],
      properties: {
        session: ref('VerificationSession'),
        organizationId: { type: 'string' },
        identityKind: { type: ['string', 'null'], enum: [...IDENTITY_KINDS, null], description: 'the kind of number the identity check ran on (never the number)' },
        history: {
          type: 'array',
          items: {
            type: 'object',
            required: ['step', 'at'],
            properties: {
              step: {
                type: 'string',
                enum: [...Object.values(SESSION_HISTORY_STEPS), 'other'],
              },
              at: TIMESTAMP,
            },
          },
          description: "the session's steps, from its stream, oldest first",
        },
        selfie: { type: 'boolean', description: 'whether the latest selfie can be shown (not once erased)' },
        portraitUrl: { type: ['string', 'null'], description: "the identity record's portrait: a signed, expiring link, as on the check itself" },
        reviewReasons: {
          type: 'object',
          required: ['approved', 'declined'],
          properties: {
            approved: { type: 'array', items: { type: 'string', enum: [...REVIEW_REASONS.approved] } },
            declined: { type: 'array', items: { type: 'string', enum: [...REVIEW_REASONS.declined] } },
          },
        },
      },
    },
    CreatedVerificationSession: {
      type: 'object',
      required: [...Object.keys(SESSION_PROPERTIES), 'hostedUrl', 'clientSecret'],
      properties: {
        ...SESSION_PROPERTIES,
        hostedUrl: { type: 'string', description: 'the hosted page; the client secret is in its fragment' },
        clientSecret: {
          type: 'string',
          pattern: '^vcs_[A-Za-z0-9_-]{43}$',
          example: 'vcs_Jq3mZt7Yw0cXk2Vb9Rn4Lp8Hs6Df1Ga5Ue3Io7Ky0Tq',
          description: 'shown once: authorises the browser on this session only, until it expires or is decided',
        },
      },
    },
  };
}
