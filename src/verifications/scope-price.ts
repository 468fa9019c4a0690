import type { AuthenticatedKey } from '../auth/api-key.guard.js';
import { ServiceUnavailable } from '../common/errors.js';
import type { AppConfig } from '../config/config.js';
import type { Scope } from '../scopes/scopes.js';

/** The organization's override, else the configured price. */
export function priceOf(key: AuthenticatedKey, scope: Scope, config: AppConfig): number {
  const override = key.organization.prices[scope];
  const price = typeof override === 'number' || typeof override === 'string' ? Number(override) : config.verifications.pricesKobo[scope];
  if (!Number.isSafeInteger(price) || price < 0) throw new ServiceUnavailable('The price of this scope is misconfigured');
  return price;
}
