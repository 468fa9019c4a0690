import { ORGANIZATION_ID, type Schema } from '../common/openapi.js';
import { MAX_FUNDING_KOBO } from '../wallets/wallet.decider.js';

const OWN: Schema = { type: ['integer', 'null'], minimum: 100, maximum: MAX_FUNDING_KOBO, description: "kobo; null: the deployment's setting" };

/** The OpenAPI schemas of an organization's top-up limits. */
export function topUpLimitsSchemas(): Record<string, Schema> {
  return {
    TopUpLimits: {
      type: 'object',
      required: ['organizationId', 'minTopUpKobo', 'maxTopUpKobo', 'dailyLimitKobo', 'own'],
      properties: {
        organizationId: ORGANIZATION_ID,
        minTopUpKobo: { type: 'integer', description: "the smallest top-up, in kobo (the deployment's TOPUP_MIN_KOBO)" },
        maxTopUpKobo: { type: 'integer', description: 'the largest top-up in force, in kobo' },
        dailyLimitKobo: { type: 'integer', description: 'the most a wallet may be topped up by per Lagos day, in kobo' },
        own: { $ref: '#/components/schemas/OwnTopUpLimits' },
      },
    },
    OwnTopUpLimits: {
      type: 'object',
      description: "The organization's own limits, for both environments; null falls back to the deployment's TOPUP_MAX_KOBO / TOPUP_DAILY_LIMIT_KOBO",
      required: ['maxTopUpKobo', 'dailyLimitKobo'],
      additionalProperties: false,
      properties: { maxTopUpKobo: OWN, dailyLimitKobo: OWN },
    },
  };
}
