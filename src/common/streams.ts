import type { Environment } from './environment.js';

/** Stream ids follow EventStoreDB's category convention: `category-id`. */
export const streams = {
  organization: (organizationId: string) => `organization-${organizationId}`,
  wallet: (organizationId: string, environment: Environment) => `wallet-${organizationId}.${environment}`,
  verification: (reference: string) => `verification-${reference}`,
} as const;

export const CATEGORIES = { organization: 'organization', wallet: 'wallet', verification: 'verification' } as const;
