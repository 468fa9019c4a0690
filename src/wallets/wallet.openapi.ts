import { ENVIRONMENT, KOBO, ORGANIZATION_ID, TIMESTAMP, type Schema } from '../common/openapi.js';
import { SCOPES } from '../scopes/scopes.js';
import { FUNDING_REFERENCE } from './funding-reference.js';
import { MAX_FUNDING_KOBO } from './wallet.decider.js';
import { WALLET_ENTRY_TYPES } from './wallet.read-model.js';

/** The OpenAPI schemas of the wallet routes, integrators' and operators'. */

const FIGURES = {
  balanceKobo: { ...KOBO, description: 'funded minus debited, in kobo' },
  reservedKobo: { ...KOBO, description: 'the prices of the checks in flight, in kobo' },
  availableKobo: { type: 'integer', description: 'balance minus reserved, in kobo: a check needs its price available', example: 10_000 },
} as const;

export function walletSchemas(): Record<string, Schema> {
  return {
    Wallet: {
      type: 'object',
      description: "The key's wallet: one per organization and environment",
      required: ['environment', 'balanceKobo', 'reservedKobo', 'availableKobo'],
      properties: { environment: ENVIRONMENT, ...FIGURES },
    },
    OrganizationWallet: {
      type: 'object',
      required: ['organizationId', 'environment', 'balanceKobo', 'reservedKobo', 'availableKobo'],
      properties: { organizationId: ORGANIZATION_ID, environment: ENVIRONMENT, ...FIGURES },
    },
    WalletTransaction: {
      type: 'object',
      required: ['type', 'reference', 'scope', 'amountKobo', 'balanceKobo', 'reservedKobo', 'availableKobo', 'createdAt'],
      properties: {
        type: {
          type: 'string',
          enum: [...WALLET_ENTRY_TYPES],
          description: 'funding credits the balance; reservation holds the price of a check; debit charges it; release returns it',
        },
        reference: { type: 'string', description: 'the funding reference of a funding, the verification reference otherwise' },
        scope: { type: ['string', 'null'], enum: [...SCOPES, null], description: 'the scope of the check; null for a funding' },
        amountKobo: { ...KOBO, description: 'always positive; type says which way it moved' },
        balanceKobo: { ...FIGURES.balanceKobo, description: 'after this transaction' },
        reservedKobo: FIGURES.reservedKobo,
        availableKobo: FIGURES.availableKobo,
        createdAt: TIMESTAMP,
      },
    },
    Funding: {
      type: 'object',
      required: ['amountKobo', 'reference'],
      additionalProperties: false,
      properties: {
        amountKobo: { type: 'integer', minimum: 1, maximum: MAX_FUNDING_KOBO, description: 'the amount to credit, in kobo' },
        reference: {
          type: 'string',
          pattern: FUNDING_REFERENCE.source,
          description: 'the funding reference (a bank transfer id, say): it credits the wallet once; `topup:` is reserved for top-ups',
        },
      },
    },
  };
}
