import type { Projection } from './projection.js';
import { organizationsProjection } from './organizations/organizations.projection.js';
import { apiKeysProjection } from './api-keys/api-keys.projection.js';
import { walletsProjection } from './wallets/wallets.projection.js';
import { walletLedgerProjection } from './wallet-ledger/wallet-ledger.projection.js';
import { verificationsProjection } from './verifications/verifications.projection.js';

/**
 * Every projection, by name. Features register theirs here (one import and one entry each).
 */
export const PROJECTIONS: readonly Projection[] = [organizationsProjection, apiKeysProjection, walletsProjection, walletLedgerProjection, verificationsProjection];

export function projectionByName(name: string): Projection | undefined {
  return PROJECTIONS.find((projection) => projection.name === name);
}
