import type { Projection } from './projection.js';
import { organizationsProjection } from './organizations/organizations.projection.js';
import { apiKeysProjection } from './api-keys/api-keys.projection.js';
import { walletsProjection } from './wallets/wallets.projection.js';
import { walletLedgerProjection } from './wallet-ledger/wallet-ledger.projection.js';
import { verificationsProjection } from './verifications/verifications.projection.js';
import { dataSubjectsProjection } from './data-subjects/data-subjects.projection.js';
import { topUpsProjection } from './topups/topups.projection.js';
import { verificationFlowsProjection } from './verification-flows/verification-flows.projection.js';
import { webhooksSubscriber } from './webhooks/webhooks.subscriber.js';

/**
 * Every projection, by name. Features register theirs here (one import and one entry each).
 */
export const PROJECTIONS: readonly Projection[] = [
  organizationsProjection,
  apiKeysProjection,
  walletsProjection,
  walletLedgerProjection,
  verificationsProjection,
  dataSubjectsProjection,
  topUpsProjection,
  verificationFlowsProjection,
];

/**
 * Subscribers of the log that run like projections (checkpoint, leadership, standbys) but are not
 * read models: never rebuilt, since what they write (deliveries) has effects outside the database.
 */
export const SUBSCRIBERS: readonly Projection[] = [webhooksSubscriber];

/** What the workers run: the projections and the subscribers. */
export const RUNNING: readonly Projection[] = [...PROJECTIONS, ...SUBSCRIBERS];

export function projectionByName(name: string): Projection | undefined {
  return PROJECTIONS.find((projection) => projection.name === name);
}
