import type { Environment } from './environment.js';

/** Stream ids follow EventStoreDB's category convention: `category-id`. */
export const streams = {
  organization: (organizationId: string) => `organization-${organizationId}`,
  wallet: (organizationId: string, environment: Environment) => `wallet-${organizationId}.${environment}`,
  verification: (reference: string) => `verification-${reference}`,
  /** A console account's facts (sign-up, passwords, roles, sessions revoked, second factor): ids and roles only. */
  consoleUser: (userId: string) => `consoleUser-${userId}`,
} as const;

export const CATEGORIES = { organization: 'organization', wallet: 'wallet', verification: 'verification', consoleUser: 'consoleUser' } as const;
