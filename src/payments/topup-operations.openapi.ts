import { ENVIRONMENT, KOBO, ORGANIZATION_ID, TIMESTAMP, type Schema } from '../common/openapi.js';
import { DISMISS_REASONS } from './topup.decider.js';

const NULLABLE_KOBO: Schema = { type: ['integer', 'null'], description: 'kobo' };
const NULLABLE_STRING: Schema = { type: ['string', 'null'] };
const STATUS: Schema = { type: 'string', enum: ['initiated', 'paid', 'credited', 'failed', 'flagged', 'dismissed'] };

/** The OpenAPI schemas of the operators' top-up routes: an organization's top-ups, and the payments that need a person. */
export function topUpOperationsSchemas(): Record<string, Schema> {
  return {
    TopUpRecord: {
      type: 'object',
      description: 'One top-up of a wallet, as the top-ups read model has it',
      required: ['reference', 'environment', 'rail', 'channel', 'status', 'amountKobo', 'paidKobo', 'feesKobo', 'creditedKobo', 'flagReason', 'paidAt', 'createdAt'],
      properties: {
        reference: { type: 'string', description: 'ours (`top_…`), or the rail’s for a bank transfer' },
        environment: ENVIRONMENT,
        rail: { type: 'string', enum: ['paystack', 'sandbox'] },
        channel: { type: 'string', enum: ['card', 'bank_transfer'] },
        status: STATUS,
        amountKobo: KOBO,
        paidKobo: NULLABLE_KOBO,
        feesKobo: NULLABLE_KOBO,
        creditedKobo: NULLABLE_KOBO,
        flagReason: NULLABLE_STRING,
        paidAt: NULLABLE_STRING,
        createdAt: TIMESTAMP,
      },
    },
    PaymentAttention: {
      type: 'object',
      description: "A top-up that needs an operator, our figures beside the provider's (asked now; all null when it could not be asked)",
      required: [
        'reference',
        'organizationId',
        'environment',
        'rail',
        'channel',
        'status',
        'attention',
        'flagReason',
        'initiatedKobo',
        'providerStatus',
        'providerKobo',
        'providerFeesKobo',
        'providerCurrency',
        'providerPaidAt',
        'createdAt',
      ],
      properties: {
        reference: { type: 'string' },
        organizationId: ORGANIZATION_ID,
        environment: ENVIRONMENT,
        rail: { type: 'string', enum: ['paystack', 'sandbox'] },
        channel: { type: 'string', enum: ['card', 'bank_transfer'] },
        status: STATUS,
        attention: {
          type: 'string',
          enum: ['flagged', 'uncredited'],
          description: 'flagged: held, nothing credited; uncredited: the provider settled it and the wallet was not credited',
        },
        flagReason: NULLABLE_STRING,
        initiatedKobo: KOBO,
        providerStatus: { type: ['string', 'null'], description: 'success, failed, abandoned, reversed, pending, not_found; null: not reachable' },
        providerKobo: NULLABLE_KOBO,
        providerFeesKobo: NULLABLE_KOBO,
        providerCurrency: NULLABLE_STRING,
        providerPaidAt: NULLABLE_STRING,
        createdAt: TIMESTAMP,
      },
    },
    TopUpResolutionInput: {
      type: 'object',
      description: "credit: the provider's settled amount, verified now, credited once; dismiss: nothing credited, for a reason of the list",
      required: ['action'],
      additionalProperties: false,
      properties: { action: { type: 'string', enum: ['credit', 'dismiss'] }, reason: { type: 'string', enum: [...DISMISS_REASONS] } },
    },
    ResolvedTopUp: {
      type: 'object',
      required: ['reference', 'organizationId', 'environment', 'status', 'creditedKobo'],
      properties: {
        reference: { type: 'string' },
        organizationId: ORGANIZATION_ID,
        environment: ENVIRONMENT,
        status: STATUS,
        creditedKobo: { ...NULLABLE_KOBO, description: 'what the wallet was credited with; null when dismissed' },
      },
    },
  };
}
